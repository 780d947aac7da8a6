"""A hand-driven JSON-RPC peer over a real subprocess's pipes, for what no SDK client would send.

stderr goes to a file, not a pipe: hostile input makes a server log a lot, and a full stderr
pipe would stall it and look like a hang. Every stdout line is kept, so a test can require that
each one is a JSON-RPC message.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = "2025-11-25"


def serve_argv() -> list[str]:
    return [sys.executable, "-m", "colibri", "serve"]


def switchboard_argv(config: Path) -> list[str]:
    return [sys.executable, "-m", "colibri", "switchboard", "run", "--config", str(config)]


class Wire:
    def __init__(self, argv: list[str], env: dict[str, str], stderr: Path, cwd: Path | None = None) -> None:
        self.stderr_path = stderr
        self._stderr = stderr.open("wb")
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env, cwd=cwd
        )
        self.lines: list[bytes] = []
        self._buffer = b""
        self._next_id = 0

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        # Closed here even when the test failed mid-session: left to the collector, the pipes warn
        # (ResourceWarning) inside whichever test runs next, and fail that one instead.
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        self._stderr.close()

    def initialize(self) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "wire-test", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_line(json.dumps(message).encode())

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: Any = None, timeout: float = 15.0) -> dict[str, Any]:
        request_id = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.replies_until(request_id, timeout)[-1]

    def replies_until(self, request_id: int, timeout: float) -> list[dict[str, Any]]:
        """Every message read up to and including the reply to `request_id`."""
        deadline = time.monotonic() + timeout
        seen = []
        while True:
            message = self.read(deadline - time.monotonic())
            seen.append(message)
            if message.get("id") == request_id and "method" not in message:
                return seen

    def read(self, timeout: float) -> dict[str, Any]:
        line = self._read_line(timeout)
        message = json.loads(line)
        assert isinstance(message, dict), line[:200]
        return message

    def _read_line(self, timeout: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            deadline = time.monotonic() + timeout
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise TimeoutError(f"no complete line from the server within {timeout:.1f} s")
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise EOFError(f"the server closed stdout (exit {self.proc.poll()})")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.lines.append(line)
        return line

    def stderr_text(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def close(self, timeout: float = 20.0) -> int:
        """EOF on stdin; collect the rest of stdout; the exit code."""
        out, _ = self.proc.communicate(timeout=timeout)
        rest = self._buffer + out
        self._buffer = b""
        self.lines.extend(line for line in rest.split(b"\n") if line)
        return self.proc.returncode
