"""Building switchboard configs from real downstreams, and driving a real switchboard subprocess."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage, MessageHandlerFnT
from mcp.types import CallToolResult

from tests.helpers import clean_env, envelope

FAULT_SERVER = Path(__file__).with_name("fault_server.py")
FAST = {
    "liveness_s": 0.2,
    "readiness_s": 0.5,
    "check_timeout_s": 1,
    "call_timeout_s": 1,
    "restart_backoff_s": 0.2,
}


def own_answer(result: CallToolResult) -> dict[str, Any]:
    """The envelope of a switchboard answer. The switchboard's own error for a tool whose output
    schema it does not fit travels as the JSON text block alone (SPEC §7); the rest as `envelope`."""
    if result.structured_content is None:
        assert result.is_error, result
        assert len(result.content) == 1 and result.content[0].type == "text", result
        loaded = json.loads(result.content[0].text)
        assert isinstance(loaded, dict) and loaded["ok"] is False, loaded
        return loaded
    return envelope(result)


async def call(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return own_answer(await client.call_tool(tool, arguments or {}))


class Downstreams:
    """Server entries for the config, and the files through which the fault servers are steered."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def fault(self, name: str, mode: str = "answer", **entry: Any) -> dict[str, Any]:
        env = {
            "FAULT_NAME": name,
            "FAULT_MODE": mode,
            "FAULT_CONTROL": str(self.control(name)),
            "FAULT_COUNT": str(self.counter(name)),
        }
        return {"command": sys.executable, "args": [str(FAULT_SERVER)], "env": env, **entry}

    def colibri(self, **env: str) -> dict[str, Any]:
        home = self.root / "colibri"
        home.mkdir(exist_ok=True)
        full = clean_env(home, COLIBRI_LOG_LEVEL="warn", **env)
        wanted = {key: value for key, value in full.items() if key.startswith("COLIBRI_") or key == "HOME"}
        return {"command": sys.executable, "args": ["-m", "colibri", "serve"], "env": wanted}

    @staticmethod
    def time_server() -> dict[str, Any]:
        return {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}

    @staticmethod
    def dead() -> dict[str, Any]:
        """A server whose process exits at once: it never gets through its handshake."""
        return {"command": sys.executable, "args": ["-c", "raise SystemExit(1)"]}

    def control(self, name: str) -> Path:
        return self.root / f"{name}.control.json"

    def counter(self, name: str) -> Path:
        return self.root / f"{name}.calls"

    def set_mode(self, name: str, mode: str, delay_s: float = 0.5) -> None:
        self.control(name).write_text(json.dumps({"mode": mode, "delay_s": delay_s}))

    def calls(self, name: str) -> int:
        """`work` calls the fault server `name` received, over all its processes."""
        path = self.counter(name)
        return len(path.read_text().splitlines()) if path.exists() else 0


def write_config(root: Path, servers: dict[str, Any], **sections: Any) -> Path:
    path = root / "switchboard.json"
    path.write_text(json.dumps({"mcpServers": servers, **sections}, indent=2))
    return path


def switchboard_command(config: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "colibri", "switchboard", "run", "--config", str(config), *extra]


def switchboard_env() -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("COLIBRI_")},
        "COLIBRI_LOG_LEVEL": "warn",
    }


@asynccontextmanager
async def switchboard(
    config: Path,
    *,
    mode: str = "legacy",
    message_handler: MessageHandlerFnT | None = None,
    env: dict[str, str] | None = None,
    extra_args: list[str] | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    """An SDK client connected to a real `colibri switchboard` subprocess over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=switchboard_command(config, *(extra_args or []))[1:],
        env={**switchboard_env(), **(env or {})},
    )
    async with Client(
        params, mode=mode, message_handler=message_handler, read_timeout_seconds=30, **options
    ) as client:
        yield client


async def servers(client: Client) -> dict[str, dict[str, Any]]:
    """switchboard_status, by server name."""
    envelope = await call(client, "switchboard_status")
    assert envelope["ok"] is True, envelope
    return {server["name"]: server for server in envelope["data"]["servers"]}


async def wait_for_state(client: Client, name: str, *states: str, timeout: float = 15.0) -> dict[str, Any]:
    """Poll switchboard_status until `name` is in one of `states`; its status then."""
    deadline = time.monotonic() + timeout
    while True:
        server = (await servers(client))[name]
        if server["state"] in states:
            return server
        assert time.monotonic() < deadline, f"{name} stayed {server['state']}, wanted {states}: {server}"
        await anyio.sleep(0.02)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited with {process.returncode}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            time.sleep(0.05)
        else:
            return
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


def stop(process: subprocess.Popen[bytes]) -> int:
    if process.poll() is None:
        process.terminate()
    try:
        return process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(5)


def process_gone(pid: int) -> bool:
    """Dead or a zombie (the test cannot reap another process's child)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status or "\nState:\tX" in status


class RawSwitchboard:
    """A switchboard subprocess driven by hand-written JSON-RPC lines; keeps every stdout line it read."""

    def __init__(self, config: Path, env: dict[str, str], *extra: str) -> None:
        self.process = subprocess.Popen(
            switchboard_command(config, *extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.lines: list[bytes] = []
        self._buffer = b""
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 15.0
    ) -> dict[str, Any]:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params or {}})
        deadline = time.monotonic() + timeout
        while True:
            reply: dict[str, Any] = json.loads(self._line(deadline))
            if reply.get("id") == self._next_id:
                return reply

    def reply(self, timeout: float = 15.0) -> dict[str, Any]:
        """The next message the switchboard writes (for requests sent ahead with `send`)."""
        message: dict[str, Any] = json.loads(self._line(time.monotonic() + timeout))
        return message

    def _line(self, deadline: float) -> bytes:
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, "no reply from the switchboard in time"
            chunk = os.read(self.process.stdout.fileno(), 65536)
            assert chunk, "the switchboard closed its stdout"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.lines.append(line)
        return line

    def finish(self, timeout: float = 20.0) -> tuple[list[bytes], bytes]:
        """Wait for the process to exit; every stdout line it wrote, and its stderr."""
        stdout, stderr = self.process.communicate(timeout=timeout)
        rest = (self._buffer + stdout).splitlines()
        return self.lines + [line for line in rest if line], stderr


class Inbox:
    """Everything the switchboard sent the client unasked."""

    def __init__(self) -> None:
        self.notifications: list[types.ServerNotification] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.arrived = anyio.Event()

    async def message(self, message: IncomingMessage) -> None:
        if not isinstance(message, Exception):
            self.notifications.append(message)
            self.arrived.set()

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)
        self.arrived.set()

    async def wait_for(self, predicate: Any, timeout: float = 10.0) -> None:
        with anyio.fail_after(timeout):
            while not predicate():
                self.arrived = anyio.Event()
                await self.arrived.wait()
