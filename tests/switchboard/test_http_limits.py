"""The HTTP face under hostile clients: Host names on a wildcard bind, idle sessions, slow sockets,
and (on stdio) arguments that are not an object."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from colibri.switchboard.faces import TokensFile
from tests.helpers import INITIALIZE, MCP_HEADERS
from tests.switchboard.helpers import (
    Downstreams,
    RawSwitchboard,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)


@contextmanager
def http_board(tmp_path: Path, bind: str, tokens_file: Path | None = None, **env: str) -> Iterator[int]:
    sections = {} if tokens_file is None else {"auth": {"tokens_file": str(tokens_file)}}
    config = write_config(tmp_path, {"c": Downstreams(tmp_path).colibri(COLIBRI_MODE="MINIMAL")}, **sections)
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"{bind}:{port}"), env={**switchboard_env(), **env}
    )
    try:
        wait_for_port(port, board)
        yield port
    finally:
        stop(board)


def post(
    port: int, body: object, host: str | None = None, session: str | None = None, token: str | None = None
) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = dict(MCP_HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if host is not None:
        headers["Host"] = host
    if session is not None:
        headers["mcp-session-id"] = session
    connection.request("POST", "/mcp", body=json.dumps(body), headers=headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_a_wildcard_bind_answers_to_loopback_names_and_refuses_others(tmp_path: Path) -> None:
    # Off loopback the switchboard serves only with bearer tokens; the Host check holds on top of them.
    tokens_file = tmp_path / "tokens.jsonl"
    token = TokensFile(tokens_file).create("t")
    with http_board(tmp_path, "0.0.0.0", tokens_file) as port:
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            assert post(port, INITIALIZE, host=host, token=token).status == 200, host
        assert post(port, INITIALIZE, host=f"rebound.example:{port}", token=token).status == 421


def test_sessions_are_capped_and_idle_ones_closed(tmp_path: Path) -> None:
    limits = {"COLIBRI_HTTP_MAX_SESSIONS": "2", "COLIBRI_HTTP_SESSION_IDLE_S": "1.5"}
    with http_board(tmp_path, "127.0.0.1", **limits) as port:
        sessions = []
        for _ in range(2):
            response = post(port, INITIALIZE)
            assert response.status == 200
            sessions.append(response.getheader("mcp-session-id"))
        assert all(sessions)
        refused = post(port, INITIALIZE)
        assert refused.status >= 500, "a third concurrent session is refused"
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert post(port, ping, session=sessions[0]).status == 200
        # Idle sessions close one by one, the least recently used first: room for a new one comes
        # when the first closes, room for another when the second does (the new one is younger).
        for _ in range(2):
            wait_until_admitted(port)
        for session in sessions:
            assert post(port, ping, session=session).status == 404, "the idle session was closed"


def wait_until_admitted(port: int, timeout: float = 60.0) -> None:
    """Send `initialize` until one is admitted (a refusal touches no session's idle time)."""
    deadline = time.monotonic() + timeout
    while (status := post(port, INITIALIZE).status) != 200:
        assert status >= 500, status
        assert time.monotonic() < deadline, "no idle session was closed to make room"
        time.sleep(0.05)  # polling a condition: the next initialize admitted


@pytest.mark.parametrize("sent", [b"", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"])
def test_a_socket_that_never_finishes_its_headers_is_closed(tmp_path: Path, sent: bytes) -> None:
    with http_board(tmp_path, "127.0.0.1", COLIBRI_HTTP_HEADER_TIMEOUT_S="1") as port:
        started = time.monotonic()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as slow:
            slow.sendall(sent)
            assert slow.recv(1024) == b"", "the server closed the connection"
        assert time.monotonic() - started < 5
        assert post(port, INITIALIZE).status == 200, "the server still serves"


def test_an_invalid_limit_is_a_usage_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"c": Downstreams(tmp_path).colibri(COLIBRI_MODE="MINIMAL")})
    env = {**switchboard_env(), "COLIBRI_HTTP_MAX_SESSIONS": "lots"}
    done = subprocess.run(
        switchboard_command(config, "--http", "127.0.0.1:1"),
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2 and b"COLIBRI_HTTP_MAX_SESSIONS" in done.stderr


def test_non_object_arguments_get_the_invalid_params_envelope(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"c": Downstreams(tmp_path).colibri(COLIBRI_MODE="MINIMAL")})
    board = RawSwitchboard(config, switchboard_env())
    try:
        board.request("initialize", INITIALIZE["params"])  # type: ignore[arg-type]
        board.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for arguments in ([1, 2], "text", 7, True):
            reply = board.request("tools/call", {"name": "switchboard_status", "arguments": arguments})
            result = reply["result"]
            assert result["isError"] is True
            envelope = result["structuredContent"]
            assert envelope["ok"] is False and envelope["error"]["code"] == "INVALID_PARAMS", envelope
            assert json.loads(result["content"][0]["text"]) == envelope
    finally:
        board.finish()
