"""JSON-RPC over pipes, read and written on the event loop: one message per line, no thread hops.

The SDK's stdio transports move every line through worker threads or relay tasks and memory
streams: portable, and right for regular files, but every call pays for the thread hops (about
0.25 ms of a 0.6 ms round trip here; the switchboard pays twice). Both `colibri serve` and the
switchboard use this instead:

- `stdio_streams()` serves on our own stdin/stdout, whatever they are: pipes, sockets and terminals
  through the loop's transports, regular files and /dev/null through unpollable.py's, so every
  line meets the same edge. Like the SDK, it points fd 0 at /dev/null and fd 1 at stderr while
  serving, so a stray print anywhere in the process can never reach the wire;
- `ProcessTransport` (process.py) starts a downstream server (POSIX) and talks to it over its
  pipes, with the shutdown the MCP spec describes: close its stdin, then terminate and kill its group.

A `Divert` may take lines before they are parsed for the SDK (the switchboard's lean lane for
tools/call): it sees the raw bytes as they arrive (diverting.py) and writes its answers as raw lines
through the same writer.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from colibri.pipes import edge
from colibri.pipes.diverting import Divert, DivertingReader
from colibri.pipes.inflight import DEFAULT_LIMIT_S, answer_before_eof
from colibri.pipes.streams_base import ClosedOnExit, ReceiveIteration
from colibri.pipes.unpollable import ByteSink, read_side, write_side

LINE_LIMIT = 64 * 1024 * 1024  # the default of COLIBRI_MAX_MESSAGE_BYTES

log = logging.getLogger("colibri.pipes")

# Set in the sending task when a message could not be written: the peer never got that request.
# The SDK reports a failed write and a connection lost mid-call alike; this tells them apart.
WRITE_FAILED: ContextVar[bool] = ContextVar("colibri_switchboard_write_failed", default=False)


def stdio_streams(
    limit: int = LINE_LIMIT, answer_within_s: float = DEFAULT_LIMIT_S, divert: Divert | None = None
) -> AbstractAsyncContextManager[tuple[Any, Any]]:
    """(read stream, write stream) over stdin/stdout for `Server.run`; `limit` caps one message, and
    every request read before stdin's end is answered first (bounded by `answer_within_s`, see
    inflight.py). `divert` sees each line first."""
    return _answering(_pipe_streams(limit, divert), answer_within_s)


@asynccontextmanager
async def _answering(
    streams: AbstractAsyncContextManager[tuple[Any, Any]], limit_s: float
) -> AsyncIterator[tuple[Any, Any]]:
    async with streams as (read_stream, write_stream):
        yield answer_before_eof(read_stream, write_stream, limit_s)


@asynccontextmanager
async def _pipe_streams(limit: int, divert: Divert | None) -> AsyncIterator[tuple[LineReader, LineWriter]]:
    loop = asyncio.get_running_loop()
    reader = DivertingReader(limit)
    reader.divert = divert  # before the pipe is open: the divert sees every line, the first included
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    read_transport = await read_side(loop, reader, stdin)
    writer = await write_side(loop, stdout)
    line_writer = LineWriter(writer)
    if divert is not None:
        divert.attach(line_writer)
    restore = _divert_standard_fds()
    try:
        line_reader = LineReader(reader, read_transport, answer=line_writer.send, limit=limit)
        line_reader.divert = divert
        yield line_reader, line_writer
    finally:
        restore()
        read_transport.close()
        writer.close()


def _divert_standard_fds() -> Callable[[], None]:
    """Point fd 0 at /dev/null and fd 1 at stderr; the wire lives on private duplicates now."""
    sys.stdout.flush()
    saved = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        sys.stdout.flush()
        for fd, original in zip((0, 1), saved, strict=True):
            os.dup2(original, fd)
            os.close(original)

    return restore


class LineReader(ReceiveIteration, ClosedOnExit):
    """Reads one JSON-RPC message per line.

    Facing a client (`answer` given) it is the JSON-RPC edge: a malformed or oversize message is
    answered through `answer` as JSON-RPC prescribes (see pipes/edge.py) and reading goes on.
    Facing a downstream server a bad line is handed on as the error, which the SDK logs.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        transport: asyncio.ReadTransport | None = None,
        *,
        answer: Callable[[SessionMessage], Awaitable[None]] | None = None,
        limit: int = LINE_LIMIT,
    ) -> None:
        self._reader = reader
        self._transport = transport
        self._answer = answer
        self._limit = limit  # the reader's own limit, which makes it raise LimitOverrunError
        self._divert: Divert | None = None

    @property
    def divert(self) -> Divert | None:
        return self._divert

    @divert.setter
    def divert(self, divert: Divert | None) -> None:
        """Let `divert` take lines as they arrive; it needs a `DivertingReader` under this reader."""
        if not isinstance(self._reader, DivertingReader):
            raise TypeError("a divert needs a LineReader over a DivertingReader")
        self._divert = self._reader.divert = divert

    async def receive(self) -> SessionMessage | Exception:
        while True:
            try:
                line = await self._line()
            except anyio.EndOfStream:
                if self._divert is not None:
                    await self._divert.drained()
                raise
            message: SessionMessage | None = None
            reply: SessionMessage | None
            if line is None:
                reply = edge.oversize(self._limit)
            elif not line.strip():
                continue
            else:
                message, reply = edge.judge(line)
            if message is not None:
                return message
            if reply is None:
                continue
            if self._answer is None:
                assert isinstance(reply.message, types.JSONRPCError)
                return ValueError(reply.message.error.message)
            try:
                await self._answer(reply)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                log.debug("could not answer a malformed message: the client stopped reading")

    async def _line(self) -> bytes | None:
        """The next line; None for a line over the limit, which is skipped whole."""
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                raise anyio.EndOfStream from None
            return exc.partial
        except asyncio.LimitOverrunError as exc:
            await self._discard(exc.consumed)
            return None

    async def _discard(self, consumed: int) -> None:
        """Drop the rest of an oversize line, up to and including its newline, or up to EOF."""
        while True:
            try:
                await self._reader.readexactly(consumed)
                await self._reader.readuntil(b"\n")
                return
            except asyncio.IncompleteReadError:
                return
            except asyncio.LimitOverrunError as exc:
                consumed = exc.consumed

    async def aclose(self) -> None:
        if self._transport is not None:
            self._transport.close()


class LineWriter(ClosedOnExit):
    """Writes one JSON-RPC message per line, waiting only when the pipe pushes back."""

    def __init__(self, writer: ByteSink) -> None:
        self._writer = writer
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed or self._writer.is_closing():
            WRITE_FAILED.set(True)
            raise anyio.ClosedResourceError
        data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        self._writer.write(data.encode() + b"\n")
        try:
            await self._writer.drain()
        except ConnectionError as exc:
            WRITE_FAILED.set(True)
            raise anyio.BrokenResourceError from exc

    def write_line(self, data: bytes) -> None:
        """Queue one serialised message (no newline) for the pipe; `drain()` waits for room."""
        if self._closed or self._writer.is_closing():
            raise anyio.ClosedResourceError
        self._writer.write(data + b"\n")

    @property
    def closing(self) -> bool:
        """Whether the pipe is closed or closing (a write that failed closes it at once)."""
        return self._closed or self._writer.is_closing()

    async def drain(self) -> None:
        try:
            await self._writer.drain()
        except ConnectionError as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        self._closed = True


from colibri.pipes.process import ProcessTransport  # noqa: E402  (it builds on the classes above)

__all__ = [
    "LINE_LIMIT",
    "WRITE_FAILED",
    "Divert",
    "DivertingReader",
    "LineReader",
    "LineWriter",
    "ProcessTransport",
    "ReceiveIteration",
    "stdio_streams",
]
