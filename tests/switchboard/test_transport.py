"""The SDK edge in-process against real server processes: connecting, losing, converting errors."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import StdioServerParameters
from mcp.shared.message import SessionMessage

from colibri.pipes import WRITE_FAILED, LineReader, LineWriter, ProcessTransport
from colibri.switchboard.base import CallTimedOut, ConnectFailed, Hooks, MalformedResult, NotSent, PeerError
from colibri.switchboard.config import ServerSpec
from colibri.switchboard.downstream import open_session
from tests.switchboard.helpers import FAULT_SERVER, process_gone

pytestmark = pytest.mark.anyio


class Heard:
    def __init__(self) -> None:
        self.closed: list[str] = []
        self.tools_changed = 0

    def hooks(self) -> Hooks:
        return Hooks(closed=self.closed.append, tools_changed=self._changed)

    def _changed(self) -> None:
        self.tools_changed += 1


def fault(tmp_path: Path, mode: str = "answer", **extra: str) -> ServerSpec:
    env = {"FAULT_NAME": "f", "FAULT_MODE": mode, "FAULT_COUNT": str(tmp_path / "f.calls"), **extra}
    return ServerSpec(name="f", command=sys.executable, args=(str(FAULT_SERVER),), env=env)


async def test_a_server_without_the_handshake_is_reached_in_the_2026_era(tmp_path: Path) -> None:
    heard = Heard()
    async with open_session(fault(tmp_path, FAULT_ERA="modern"), heard.hooks(), 10) as session:
        version = session.protocol_version
        result = await session.call_tool("work", {"value": 2}, 2)
    assert version == "2026-07-28"
    assert result.structured_content == {"echo": {"value": 2}, "server": "f", "call": 1}
    assert result.meta is None, "the downstream's serverInfo stamp is not passed on"
    assert heard.closed == [], "the refused first attempt is not reported as a lost connection"


async def test_a_session_converts_every_kind_of_failure(tmp_path: Path) -> None:
    heard = Heard()
    async with open_session(fault(tmp_path), heard.hooks(), 10) as session:
        assert session.server_name == "f"
        assert session.protocol_version == "2025-11-25", "the handshake era first: cheaper, relays requests"
        await session.ping(2)
        assert [tool.name for tool in await session.list_tools(2)] == ["work", "info", "touch", "set_mode"]
        result = await session.call_tool("work", {"value": 1}, 2)
        assert result.structured_content == {"echo": {"value": 1}, "server": "f", "call": 1}
        assert result.meta is None, "the downstream's serverInfo stamp is not passed on"

        for mode, error, text in [
            ("fail", PeerError, "JSON-RPC error -32603: injected failure on call 2"),
            ("malformed", MalformedResult, "Invalid structured content returned by tool work"),
            ("timeout", CallTimedOut, "no answer within 0.2 s"),
        ]:
            await session.call_tool("set_mode", {"mode": mode}, 2)
            with pytest.raises(error, match=text) as caught:
                await session.call_tool("work", {}, 0.2)
            assert caught.value.sent

        pid = (await session.call_tool("info", {}, 2)).structured_content["pid"]  # type: ignore[index]
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(2):
            await session.wait_closed()
        assert heard.closed == ["the process exited (its stdout closed)"]
        with pytest.raises(NotSent) as refused:
            await session.call_tool("work", {}, 2)
        assert not refused.value.sent


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # The kind of failure, not the command: it may hold an expanded secret (SPEC §14).
        (ServerSpec(name="x", command="/nonexistent/server"), "^cannot start: no such file or directory$"),
        (
            ServerSpec(name="x", command=sys.executable, args=("-c", "raise SystemExit(1)")),
            "handshake failed",
        ),
        (ServerSpec(name="x", url="http://127.0.0.1:9/mcp"), "connection failed: "),
    ],
)
async def test_connection_failures(spec: ServerSpec, message: str) -> None:
    with pytest.raises(ConnectFailed, match=message) as caught:
        async with open_session(spec, Heard().hooks(), 5):
            pass
    assert not caught.value.sent


# Reads every request and answers none, the handshake included. (The fault server's "hang" mode
# answers `initialize` on purpose, so that a connected server can hang; it cannot stand in here.)
MUTE = "import sys\nfor line in sys.stdin:\n    pass\n"


async def test_a_handshake_that_never_ends_is_bounded() -> None:
    started = time.perf_counter()
    mute = ServerSpec(name="mute", command=sys.executable, args=("-c", MUTE))
    with pytest.raises(ConnectFailed, match=r"no handshake within 0\.5 s"):
        async with open_session(mute, Heard().hooks(), 0.5):
            pass
    # 0.5 s of handshake, then the stop: the mute server leaves as soon as its stdin closes, so the
    # bound is 2 s of slack for a loaded machine (and fails a deadline ten times too long).
    assert time.perf_counter() - started < 0.5 + 2.0


class QuickStop(ProcessTransport):
    EOF_WAIT_S = TERM_WAIT_S = 0.2


async def test_a_process_that_ignores_stdin_and_sigterm_is_killed() -> None:
    stubborn = "; ".join(
        [
            "import signal, time",
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)",
            "print('up', flush=True)",
            "time.sleep(60)",
        ]
    )
    transport = QuickStop(StdioServerParameters(command=sys.executable, args=["-c", stubborn]))
    started = time.perf_counter()
    async with transport as (read_stream, _write_stream):
        assert isinstance(await read_stream.receive(), ValueError), (
            "a line that is not JSON-RPC is an error item"
        )
        pid = transport.pid
    assert time.perf_counter() - started < 3
    assert pid is not None and process_gone(pid)


async def test_a_write_nobody_reads_is_marked_as_never_sent() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(write_end, "wb", buffering=0)
    )
    writer = LineWriter(asyncio.StreamWriter(transport, protocol, None, loop))
    message = SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping"))
    assert WRITE_FAILED.get() is False
    with pytest.raises((anyio.BrokenResourceError, anyio.ClosedResourceError)):
        await writer.send(message)
    assert WRITE_FAILED.get() is True
    transport.close()


async def test_line_reader_skips_blank_lines_and_ends_at_eof() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(b'\n  \n{"jsonrpc": "2.0", "id": 1, "method": "ping"}\nnot json\n')
    reader.feed_eof()
    lines = LineReader(reader)
    items = [item async for item in lines]
    assert len(items) == 2
    assert not isinstance(items[0], Exception) and items[0].message.model_dump()["method"] == "ping"
    assert isinstance(items[1], ValueError)
