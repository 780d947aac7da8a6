"""Every background duty runs on both transports (SPEC §14: "one program, two transports").

`serve` on stdio and `serve --http` start the same list: phase 2 of the boot, the audit rows of
calls answered inline, a checkpoint on the interval while the log grows, and one at shutdown.
Each test starts a real server on each transport and watches the SQLite file from outside;
no other call follows the one whose effect is awaited, so nothing but the duty can produce it.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from tests.helpers import INITIALIZE, MCP_HEADERS, clean_env, query
from tests.helpers.raw import RawSession
from tests.http.helpers import make_token, running

TRANSPORTS = ["stdio", "http"]
INLINE_SLA_S = 1.0  # SPEC §14: an inline call's row is committed within 1 s


@dataclass
class Served:
    """One running server on either transport, driven by plain JSON-RPC."""

    call: Any  # (tool, arguments) -> the tools/call result
    pid: int
    stop: Any  # () -> exit code, by stdin EOF (stdio) or SIGTERM (HTTP)


@contextmanager
def serving(transport: str, env: dict[str, str], tmp_path: Path) -> Iterator[Served]:
    if transport == "stdio":
        session = RawSession(env)
        try:
            session.initialize()
            yield Served(
                call=lambda tool, arguments: session.call_tool(tool, arguments)["result"],
                pid=session.proc.pid,
                stop=lambda: session.close(timeout=20)[0],
            )
        finally:
            if session.proc.poll() is None:
                session.proc.kill()
            session.proc.communicate(timeout=10)  # reaps it and closes its pipes
        return
    with running(env, tmp_path, "--no-auth") as server:
        session = HttpSession(server.url)
        yield Served(call=session.call, pid=server.process.pid, stop=server.stop)


class HttpSession:
    """A handshake-era MCP session over Streamable HTTP, posted by hand."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self.url = url
        self.headers = dict(MCP_HEADERS)
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"
        reply = httpx.post(url, json=INITIALIZE, headers=self.headers, timeout=30)
        assert reply.status_code == 200, reply.text
        self.headers["mcp-session-id"] = reply.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = _json_rpc(reply)["result"]["protocolVersion"]
        notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx.post(url, json=notified, headers=self.headers, timeout=30).status_code == 202
        self._ids = iter(range(2, 1_000_000))

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        body = {
            "jsonrpc": "2.0",
            "id": next(self._ids),
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        reply = httpx.post(self.url, json=body, headers=self.headers, timeout=30)
        assert reply.status_code == 200, reply.text
        return _json_rpc(reply)["result"]


def _json_rpc(reply: httpx.Response) -> dict[str, Any]:
    if reply.headers["content-type"].startswith("application/json"):
        message: dict[str, Any] = reply.json()
        return message
    data = [line[5:].strip() for line in reply.text.splitlines() if line.startswith("data:")]
    return dict(json.loads(data[-1]))


def _outcomes(db: Path, tool: str) -> list[str]:
    return [row["outcome"] for row in query(db, "SELECT outcome FROM actions WHERE tool = ?", (tool,))]


def _wait(condition: Any, within_s: float, what: str) -> float:
    """Seconds until `condition()` held; fails after `within_s`."""
    started = time.monotonic()
    while not condition():
        elapsed = time.monotonic() - started
        assert elapsed < within_s, f"{what}: not within {within_s} s"
        time.sleep(0.02)
    return time.monotonic() - started


def _log_size(db: Path) -> int:
    return int(query(db, "SELECT count(*) AS n FROM log_entries")[0]["n"])


def _checkpoint_sizes(db: Path) -> list[int]:
    return [int(row["size"]) for row in query(db, "SELECT size FROM log_checkpoints ORDER BY id")]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_phase_2_boots_on_both_transports(transport: str, tmp_path: Path) -> None:
    with serving(transport, clean_env(tmp_path), tmp_path) as served:
        health = served.call("server_health", {})["structuredContent"]["data"]
        assert (health["phase"], health["mode"]) == ("phase2", "FULL")
        assert health["db_tables"] > 0


@pytest.mark.serial
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_an_inline_calls_row_is_committed_within_a_second_with_no_call_after_it(
    transport: str, tmp_path: Path
) -> None:
    env = clean_env(tmp_path)
    db = Path(env["COLIBRI_DB_PATH"])
    with serving(transport, env, tmp_path) as served:
        assert served.call("server_ping", {})["isError"] is False
        _wait(lambda: _outcomes(db, "server_ping") == ["ok"], INLINE_SLA_S, "the ping's audit row")
        logged = _log_size(db)
        # Killed with no chance to flush anything more: what the client was promised is on disk.
        os.kill(served.pid, signal.SIGKILL)
    assert _outcomes(db, "server_ping") == ["ok"]
    assert logged >= 1 and _log_size(db) == logged


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_checkpoint_is_made_on_the_interval_while_the_log_grows(transport: str, tmp_path: Path) -> None:
    env = clean_env(tmp_path, COLIBRI_CHECKPOINT_INTERVAL_S="0.2")
    db = Path(env["COLIBRI_DB_PATH"])
    with serving(transport, env, tmp_path) as served:
        served.call("server_ping", {})
        _wait(lambda: _outcomes(db, "server_ping") != [], 5, "the ping's audit row")
        size = _log_size(db)
        _wait(lambda: size in _checkpoint_sizes(db), 10, f"an interval checkpoint of size {size}")
        reasons = [row["reason"] for row in query(db, "SELECT reason FROM log_checkpoints")]
        assert "interval" in reasons


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_checkpoint_is_made_at_shutdown(transport: str, tmp_path: Path) -> None:
    env = clean_env(tmp_path, COLIBRI_CHECKPOINT_INTERVAL_S="3600")
    db = Path(env["COLIBRI_DB_PATH"])
    with serving(transport, env, tmp_path) as served:
        served.call("server_ping", {})
        _wait(lambda: _outcomes(db, "server_ping") != [], 5, "the ping's audit row")
        assert _checkpoint_sizes(db) == [], "no checkpoint before the stop (the interval is an hour)"
        assert served.stop() == 0
    [(size, reason)] = [tuple(row) for row in query(db, "SELECT size, reason FROM log_checkpoints")]
    assert (size, reason) == (_log_size(db), "shutdown")


def test_a_refused_calls_row_is_committed_before_its_answer(tmp_path: Path) -> None:
    """A read token's task_create is refused; its row and log entry exist the moment the answer
    arrives, and survive a SIGKILL that follows at once."""
    env = clean_env(tmp_path)
    db = Path(env["COLIBRI_DB_PATH"])
    token = make_token(env, "reader", "read")
    with running(env, tmp_path) as server:
        result = HttpSession(server.url, token).call("task_create", {"title": "not allowed"})
        assert result["structuredContent"]["error"]["code"] == "TOOL_NOT_ADMITTED"
        rows = query(db, "SELECT sequence_no, outcome, principal FROM actions WHERE tool = 'task_create'")
        assert [tuple(row)[1:] for row in rows] == [("denied", "reader")]
        logged = query(db, "SELECT idx FROM log_entries WHERE kind = 'action' AND ref = ?", (rows[0][0],))
        assert len(logged) == 1, "the refusal's log entry is committed with its row"
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(10)
    assert len(query(db, "SELECT 1 FROM actions WHERE outcome = 'denied'")) == 1
