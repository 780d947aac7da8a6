"""SIGKILL of the switchboard mid-burst (SPEC §15): every call whose answer a client received has its
row in the audit store, because an answer leaves only once its row is committed. On stdio (the lean
lane: requests pipelined, answered from the downstream's callbacks) and over HTTP (the SDK's lane,
eight clients at once).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.helpers.lost import lost_connection
from tests.switchboard.audit_helpers import Raw, arguments_column, calls
from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    free_port,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)

AUDIT = {"db": "gateway.db"}
BURST = 20_000
KILL_AFTER = 60


def _recorded(store: Path) -> dict[str, str]:
    """The outcome of each recorded call, by its arguments column."""
    return {row["arguments"]: row["outcome"] for row in calls(store)}


def test_sigkill_on_stdio_mid_burst_loses_no_answered_call(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path, {"echo": downstreams.fault("echo")}, health=FAST, audit={"db": "gateway.db"}
    )
    raw = Raw(config)
    answered: list[int] = []
    sent: list[int] = []

    def burst() -> None:  # keeps requests coming, pipelined, until the pipe breaks
        with contextlib.suppress(OSError):
            for value in range(BURST):
                raw.board.send(
                    {
                        "jsonrpc": "2.0",
                        "id": 1000 + value,
                        "method": "tools/call",
                        "params": {"name": "echo.work", "arguments": {"value": value}},
                    }
                )
                sent.append(value)

    sender = threading.Thread(target=burst, daemon=True)
    try:
        raw.wait_for("echo", "HEALTHY")
        sender.start()
        while len(answered) < KILL_AFTER:
            reply = raw.board.reply()
            if reply.get("id", 0) >= 1000 and "result" in reply:
                answered.append(reply["id"] - 1000)
        raw.board.process.send_signal(signal.SIGKILL)
    finally:
        raw.board.process.kill()
        raw.board.process.communicate(timeout=20)
        sender.join(20)

    recorded = _recorded(tmp_path / "gateway.db")
    assert all(recorded.get(arguments_column({"value": value})) == "ok" for value in answered), answered
    assert len(recorded) < len(sent)  # killed mid-burst indeed: calls were still on their way


@pytest.mark.anyio
async def test_sigkill_over_http_mid_burst_loses_no_answered_call(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path, {"echo": downstreams.fault("echo")}, health=FAST, audit={"db": "gateway.db"}
    )
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    url = f"http://127.0.0.1:{port}/mcp"
    answered: list[int] = []
    killed = threading.Event()
    try:
        wait_for_port(port, board)

        async def client(first: int) -> None:
            try:
                async with Client(url, mode="legacy") as session:
                    await wait_for_state(session, "echo", "HEALTHY")
                    for value in range(first, first + BURST):
                        result = await session.call_tool("echo.work", {"value": value})
                        assert not result.is_error
                        answered.append(value)
                        if len(answered) >= KILL_AFTER and not killed.is_set():
                            killed.set()
                            board.send_signal(signal.SIGKILL)
            except Exception as exc:
                if not (killed.is_set() and lost_connection(exc)):
                    raise

        async with anyio.create_task_group() as clients:
            for index in range(8):
                clients.start_soon(client, index * 100_000)
    finally:
        board.kill()
        board.wait(20)
    recorded = _recorded(tmp_path / "gateway.db")
    assert len(answered) >= KILL_AFTER
    assert all(recorded.get(arguments_column({"value": value})) == "ok" for value in answered)
