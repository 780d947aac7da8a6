"""An answer larger than the pipe reaches a reader that takes its time (SPEC §1.3).

`colibri serve`'s tools/list is over 64 KiB, more than a Linux pipe holds. When the client closes
stdin at once and reads only later, the server has filled the pipe and still holds the rest of the
answer when its input ends: it must wait for the reader to take it before it exits, not leave it
in a buffer that dies with the process (the suite saw one truncated tools/list under load)."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import termios
import time
from contextlib import suppress
from pathlib import Path

from tests.helpers import INITIALIZE, clean_env

PIPE_CAPACITY = 65536
# What the pipe holds once the server has had to stop writing: its capacity in pages, less the room
# the answers' page boundaries leave unused.
FULL = PIPE_CAPACITY - 2 * 4096


def _waiting(fd: int) -> int:
    """The bytes a pipe holds that nobody has read yet."""
    held = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, held)
    return int.from_bytes(held, sys.byteorder)


def test_a_tools_list_larger_than_the_pipe_is_whole_for_a_reader_that_reads_late(tmp_path: Path) -> None:
    requests = "".join(
        json.dumps(message) + "\n"
        for message in (
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "colibri", "serve"],
        env=clean_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(requests.encode())
    process.stdin.close()
    try:
        # The server has filled the pipe: what it still has to say waits in its own buffer.
        deadline = time.monotonic() + 60
        while _waiting(process.stdout.fileno()) < FULL and process.poll() is None:
            assert time.monotonic() < deadline, "the server never filled the pipe"
            time.sleep(0.02)
        # Given time to leave, a server that drops its buffer would exit now; one that flushes waits.
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=2)
        output = process.stdout.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        process.stdout.close()
    answers = {message["id"]: message for message in map(json.loads, output.decode().splitlines())}
    assert len(output) > PIPE_CAPACITY, "tools/list fits in the pipe: this test no longer tests anything"
    assert "result" in answers[2] and len(answers[2]["result"]["tools"]) > 10
    assert process.returncode == 0
