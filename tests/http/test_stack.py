"""`colibri serve --http` on the stack serving/http.py chooses (SPEC §25): uvicorn's httptools
protocol on a uvloop event loop, with every socket guard of `HttpLimits` holding on it: a client
that never finishes its headers (slow loris) or says nothing is cut at the header timeout, and
connections beyond the cap get 503 while the others are served. One server serves every check."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.abuse import _answer
from tests.http.helpers import HttpServer, http_env, running


def _loaded_libraries(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


def _silenced_within(port: int, sent: bytes, seconds: float) -> float:
    """Send `sent` on a new connection and say nothing more: how long until the server closes it."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as slow:
        slow.sendall(sent)
        assert slow.recv(1024) == b"", "the server closed the connection without an answer"
    return time.monotonic() - started


def _held(port: int) -> socket.socket:
    """A connection busy with a request whose body never arrives (held until the body timeout)."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    raw.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 100\r\n\r\n{{".encode())
    return raw


def _get_healthz(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        return _answer(raw)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tmp_path = tmp_path_factory.mktemp("stack")
    env = http_env(tmp_path, COLIBRI_HTTP_HEADER_TIMEOUT_S="1", COLIBRI_HTTP_MAX_CONNECTIONS="3")
    with running(env, tmp_path, "--no-auth") as started:
        yield started


def test_the_server_runs_on_httptools_and_uvloop(server: HttpServer) -> None:
    libraries = _loaded_libraries(server.process.pid)
    assert "/uvloop/loop." in libraries, "the event loop is not uvloop's"
    assert "/httptools/parser/parser." in libraries, "the HTTP parser is not httptools'"


@pytest.mark.parametrize("sent", [b"", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"])
def test_a_socket_that_never_finishes_its_headers_is_closed(server: HttpServer, sent: bytes) -> None:
    assert _silenced_within(server.port, sent, seconds=10) < 5
    assert _get_healthz(server.port).startswith(b"HTTP/1.1 200"), "the server still serves"


def test_connections_beyond_the_cap_get_503_and_the_server_serves_again_after(server: HttpServer) -> None:
    held = [_held(server.port), _held(server.port)]
    try:
        refused = _get_healthz(server.port)  # the third connection of three allowed
    finally:
        for raw in held:
            raw.close()
    assert refused.startswith(b"HTTP/1.1 503"), refused[:300]
    deadline = time.monotonic() + 30
    while not (answer := _get_healthz(server.port)).startswith(b"HTTP/1.1 200"):
        assert time.monotonic() < deadline, answer[:300]
        time.sleep(0.05)  # polling a condition: the closed connections leave the server's count
