"""What the team trial threw at the HTTP faces, by hand over raw sockets: huge and slow bodies,
a process's memory read from /proc, and an address of this machine that is not loopback."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Sequence
from pathlib import Path

import httpx2

from tests.helpers import INITIALIZE, missing_part

MIB = 1024 * 1024


def rss_bytes(pid: int) -> int:
    """The resident memory of process `pid` (VmRSS in /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def post_huge_body(port: int, path: str, total: int, *, declared: bool, host: str = "127.0.0.1") -> bytes:
    """POST `total` bytes to `path` (with a Content-Length, or chunked), sending while the server
    lets us; returns the start of the answer (the status line first)."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    )
    head += f"Content-Length: {total}\r\n\r\n" if declared else "Transfer-Encoding: chunked\r\n\r\n"
    chunk = b"token=" + b"x" * (MIB - 6)
    framed = chunk if declared else f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        raw.sendall(head.encode())
        sent = 0
        try:
            while sent < total:
                raw.sendall(framed)
                sent += len(chunk)
            if not declared:
                raw.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server may close once it has answered; the answer is still ours to read
        return _answer(raw)


def post_slowly(port: int, path: str, *, first: bytes, declared: int) -> tuple[bytes, float]:
    """Send the headers and `first` bytes of a `declared`-byte body, then nothing: (answer, wait)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as raw:
        raw.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {declared}\r\n\r\n".encode()
            + first
        )
        started = time.monotonic()
        answer = _answer(raw)
        return answer, time.monotonic() - started


def _answer(raw: socket.socket) -> bytes:
    """One whole answer: its head, then as much body as its Content-Length says."""
    answer = b""
    try:
        while b"\r\n\r\n" not in answer and (chunk := raw.recv(65536)):
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in head.lower().split(b"\r\n")
                if line.startswith(b"content-length:")
            ),
            0,
        )
        while len(body) < length and (chunk := raw.recv(65536)):
            body += chunk
    except OSError as error:
        raise AssertionError(f"no whole answer, only {error!r} after {answer!r}") from error
    return head + b"\r\n\r\n" + body


def non_loopback_address() -> str:
    """An IPv4 address of this machine that is not loopback (a request to it comes from it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the source address
            address: str = probe.getsockname()[0]
        except OSError:
            address = "127.0.0.1"
    if address.startswith("127."):
        missing_part("this test needs a network interface with a non-loopback IPv4 address")
    return address


def refuses_foreign_hosts_and_origins(
    http: httpx2.Client, routes: Sequence[tuple[str, str]], headers: dict[str, str], form: str
) -> None:
    """Every route of a face answers a foreign Host (or a name merely starting with `127.`) with
    421 and a foreign Origin with 403, whatever the request (`/mcp` gets an initialize, the rest
    `form`), and a plain /healthz still gets through."""
    for method, path in routes:
        body = json.dumps(INITIALIZE) if path == "/mcp" else form
        for host in ("evil.example", "127.attacker.example"):
            foreign = http.request(method, path, content=body, headers={**headers, "Host": host})
            assert foreign.status_code == 421, (method, path, host, foreign.status_code, foreign.text)
        cross = http.request(method, path, content=body, headers={**headers, "Origin": "http://evil.example"})
        assert cross.status_code == 403, (method, path, cross.status_code, cross.text)
    assert http.get("/healthz").status_code == 200
