"""Credentials before bodies (SPEC §21): an unauthenticated peer is answered 401 from its headers,
and the body it announced is never gathered, so 40 such peers cost the switchboard next to no
memory (the trial: 4 MiB per connection, RSS 90 → 261 MiB over 40 connections)."""

from __future__ import annotations

import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.http.abuse import MIB, rss_bytes
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)

PEERS = 40
DECLARED = 4 * MIB  # the face's cap at /mcp: a body of this size is accepted once a token is good
CHUNK = b"x" * 65536


def test_forty_unauthenticated_4_mib_bodies_get_401_unread_and_cost_under_10_mb(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens"
    made = subprocess.run(
        [sys.executable, "-m", "colibri", "token", "create", "ana", "--file", str(tokens_file)],
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    config = write_config(
        tmp_path, {"a": Downstreams(tmp_path).fault("a")}, auth={"tokens_file": str(tokens_file)}
    )
    port = free_port()
    process = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, process)
        assert _unauthenticated_post(port, total=100, send=100)[0].startswith(b"HTTP/1.1 401")  # warm-up
        before = rss_bytes(process.pid)
        peak = _Peak(process.pid)
        answers: list[tuple[bytes, int]] = []
        start = threading.Barrier(PEERS)

        def peer() -> None:
            start.wait(30)
            try:
                answers.append(_unauthenticated_post(port, total=DECLARED, send=DECLARED - 1))
            except AssertionError as failed:
                answers.append((str(failed).encode(), 0))

        threads = [threading.Thread(target=peer) for _ in range(PEERS)]
        with peak:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
        grown = peak.most - before
    finally:
        stop(process)
    assert len(answers) == PEERS
    statuses = [answer.split(b"\r\n", 1)[0] for answer, _ in answers]
    # Each answer came although the body never ended (its last byte was never sent): it was not read.
    assert statuses == [b"HTTP/1.1 401 Unauthorized"] * PEERS, (f"grew {grown / MIB:.1f} MiB", statuses)
    assert grown < 10 * 1000 * 1000, f"the switchboard grew by {grown / MIB:.1f} MiB"


def _unauthenticated_post(port: int, *, total: int, send: int) -> tuple[bytes, int]:
    """POST /mcp without a token, declaring `total` bytes and sending `send` of them while reading
    whatever comes back; (the answer, the bytes of body sent) once the answer is whole and the
    sending is done or refused (the server may close after answering)."""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {total}\r\n\r\n"
    )
    answer, sent = b"", 0
    deadline = time.monotonic() + 20
    with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:
        raw.sendall(head.encode())
        raw.setblocking(False)
        while not (_whole(answer) and sent >= send):
            left = deadline - time.monotonic()
            assert left > 0, f"no whole answer within 20 s after {sent} bytes of body: {answer[:200]!r}"
            writing = [raw] if sent < send else []
            readable, writable, _ = select.select([raw], writing, [], left)
            if readable:
                try:
                    chunk = raw.recv(65536)
                except ConnectionError:
                    chunk = b""
                if not chunk:
                    break
                answer += chunk
            if writable:
                try:
                    sent += raw.send(CHUNK[: send - sent])
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    sent = send  # the server closed after its answer: nothing more to send
    return answer, sent


def _whole(answer: bytes) -> bool:
    head, blank, body = answer.partition(b"\r\n\r\n")
    if not blank:
        return False
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(body) >= int(line.split(b":", 1)[1])
    return True


class _Peak:
    """The highest VmRSS of a process while the block runs, read every 5 ms."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.most = rss_bytes(pid)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch)

    def _watch(self) -> None:
        while not self._done.wait(0.005):
            self.most = max(self.most, rss_bytes(self.pid))

    def __enter__(self) -> _Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.most = max(self.most, rss_bytes(self.pid))
