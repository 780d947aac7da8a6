"""A raw JSON-RPC session over a `colibri serve` subprocess's pipes.

For what the SDK client will not send (non-object arguments) and for checking every byte
the server writes to stdout.
"""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = "2025-11-25"


class RawSession:
    def __init__(self, env: dict[str, str], cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "colibri", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self.stdout_lines: list[bytes] = []
        self._next_id = 0
        self._buffer = b""

    def initialize(self) -> dict[str, Any]:
        """Handshake, tools/list, then resources/list, answered (or refused, by a server serving no
        skills) only once phase 2 is over: tools/list answers at once (SPEC §25)."""
        reply = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.request("tools/list")
        self.request("resources/list")
        return reply

    def send(self, message: dict[str, Any] | str) -> None:
        assert self.proc.stdin is not None
        line = message if isinstance(message, str) else json.dumps(message)
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: Any = None, timeout: float = 15.0) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait_for(self._next_id, timeout)

    def call_tool(self, name: str, arguments: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def wait_for(self, request_id: int, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            line = self._read_line(deadline - time.monotonic())
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def _read_line(self, timeout: float) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                if timeout <= 0 or not selector.select(timeout):
                    raise TimeoutError("no complete line from the server in time")
                chunk = self.proc.stdout.read1(65536)  # type: ignore[attr-defined]
                if not chunk:
                    raise EOFError("server closed stdout")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.stdout_lines.append(line)
        return line

    def close(self, timeout: float = 10.0) -> tuple[int, bytes, bytes]:
        """Close stdin (EOF) and collect the rest of stdout and all of stderr."""
        out, err = self.proc.communicate(timeout=timeout)
        rest = self._buffer + out
        self.stdout_lines.extend(line for line in rest.split(b"\n") if line)
        return self.proc.returncode, rest, err
