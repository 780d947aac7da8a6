"""Streamable HTTP both ways: clients reach the switchboard over HTTP, and a downstream is given by url."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp_types import ToolListChangedNotification

from tests.helpers import chain_error
from tests.switchboard.helpers import (
    FAULT_SERVER,
    Downstreams,
    call,
    free_port,
    servers,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio


def start_remote(downstreams: Downstreams, port: int) -> subprocess.Popen[bytes]:
    """The fault server over Streamable HTTP on 127.0.0.1:port, as a separate process."""
    env = {**switchboard_env(), **downstreams.fault("remote")["env"]}
    return subprocess.Popen([sys.executable, str(FAULT_SERVER), "--http", f"127.0.0.1:{port}"], env=env)


def start_board(
    tmp_path: Path, downstreams: Downstreams, remote_port: int, board_port: int, health: dict[str, float]
) -> subprocess.Popen[bytes]:
    """An HTTP switchboard before the remote (by url) and a local fault server, `work` falling back."""
    config = write_config(
        tmp_path,
        {"remote": {"url": f"http://127.0.0.1:{remote_port}/mcp"}, "local": downstreams.fault("local")},
        fallbacks={"work": ["remote.work", "local.work"]},
        health=health,
    )
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{board_port}"), env=switchboard_env()
    )
    try:
        wait_for_port(board_port, board)
    except BaseException:
        stop(board)
        raise
    return board


async def test_http_clients_and_an_http_downstream(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    remote_port, board_port = free_port(), free_port()
    remote = start_remote(downstreams, remote_port)
    board = None
    try:
        wait_for_port(remote_port, remote)
        health = {"liveness_s": 0.2, "readiness_s": 1, "check_timeout_s": 2, "cooldown_s": 30}
        board = start_board(tmp_path, downstreams, remote_port, board_port, health)
        url = f"http://127.0.0.1:{board_port}/mcp"

        async with Client(url, mode="legacy") as client:
            await wait_for_state(client, "remote", "HEALTHY")
            await wait_for_state(client, "local", "HEALTHY")
            names = {tool.name for tool in (await client.list_tools()).tools}
            remote_answer = await client.call_tool("remote.work", {"n": 1})
            routed = await client.call_tool("work", {"n": 2})
            remote_status = (await servers(client))["remote"]
        async with Client(url, mode="auto") as modern:
            modern_answer = await modern.call_tool("remote.work", {"n": 3})

            stop(remote)
            gone = await wait_for_state(modern, "remote", "STARTING", "UNHEALTHY", "QUARANTINE", timeout=10)
            fallback = await modern.call_tool("work", {"n": 4})
            refused = chain_error(await call(modern, "remote.work", {}))
        rebinding = rebinding_attempt(url)
        assert stop(board) == 0, "SIGTERM stops the HTTP switchboard cleanly"
    finally:
        stop(remote)
        if board is not None:
            stop(board)

    assert {"remote.work", "local.work", "work", "switchboard_status"} <= names
    assert remote_answer.structured_content == {"echo": {"n": 1}, "server": "remote", "call": 1}
    assert routed.structured_content == {"echo": {"n": 2}, "server": "remote", "call": 2}
    assert remote_status["transport"] == "http" and remote_status["server_name"] == "remote"
    assert modern_answer.structured_content == {"echo": {"n": 3}, "server": "remote", "call": 3}
    # A dead HTTP server surfaces as a failed transport (or failed checks): out of routing either way.
    assert gone["routable"] is False
    # It was healthy, then left HEALTHY (a first check that timed out on a loaded machine may come
    # before: the order, not the first entry, is what this shows).
    moves = [t["to"] for t in gone["transitions"]]
    assert "HEALTHY" in moves and moves[-1] != "HEALTHY", moves
    assert fallback.structured_content == {"echo": {"n": 4}, "server": "local", "call": 1}
    assert refused["code"] == "SERVICE_UNAVAILABLE"
    assert refused["message"].startswith("remote.work is unavailable: remote ")
    assert rebinding[0] == 421 and "Host header does not name this server" in rebinding[1]


async def test_a_refused_http_downstream_falls_back_at_once_and_list_changes_are_advertised(
    tmp_path: Path,
) -> None:
    downstreams = Downstreams(tmp_path)
    remote_port, board_port = free_port(), free_port()
    remote = start_remote(downstreams, remote_port)
    board = None
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed.set()

    try:
        wait_for_port(remote_port, remote)
        # Checks so rare that only the call itself can find the remote gone.
        health = {"liveness_s": 30, "readiness_s": 30, "check_timeout_s": 1, "cooldown_s": 30}
        board = start_board(tmp_path, downstreams, remote_port, board_port, health)
        async with Client(
            f"http://127.0.0.1:{board_port}/mcp", mode="legacy", message_handler=on_message
        ) as client:
            advertised = client.server_capabilities.tools
            await wait_for_state(client, "remote", "HEALTHY")
            await wait_for_state(client, "local", "HEALTHY")
            changed = anyio.Event()
            stop(remote)
            # No waiting for a state change: the refused request never left, so the fallback serves it.
            fallback = await client.call_tool("work", {"n": 1})
            with anyio.fail_after(10):
                await changed.wait()
            names = {tool.name for tool in (await client.list_tools()).tools}
        assert stop(board) == 0
    finally:
        stop(remote)
        if board is not None:
            stop(board)

    assert advertised is not None and advertised.list_changed is True
    assert fallback.structured_content == {"echo": {"n": 1}, "server": "local", "call": 1}
    assert "remote.work" not in names and {"local.work", "work"} <= names
    assert downstreams.calls("remote") == 0


def rebinding_attempt(url: str) -> tuple[int, str]:
    """A request whose Host header names another site, as a DNS-rebinding page would send."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Host": "evil.example:80",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()
