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

Both read through `LineReader` (reader.py) and write through `LineWriter` (writer.py).

A `Divert` may take lines before they are parsed for the SDK (the switchboard's lean lane for
tools/call): it sees the raw bytes as they arrive (diverting.py) and writes its answers as raw lines
through the same writer.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from typing import Any

import anyio

from colibri.pipes.diverting import Divert, DivertingReader
from colibri.pipes.inflight import DEFAULT_LIMIT_S, answer_before_eof
from colibri.pipes.process import ProcessTransport
from colibri.pipes.reader import LINE_LIMIT, LineReader
from colibri.pipes.streams_base import ReceiveIteration
from colibri.pipes.unpollable import OutputSink, read_side, write_side
from colibri.pipes.writer import WRITE_FAILED, LineWriter

FLUSH_S = 30.0  # at exit, how long the rest of our output waits for a reader that has not taken it


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
        await _flushed(writer)
        writer.close()


async def _flushed(writer: OutputSink) -> None:
    """Wait until what the pipe transport still holds has reached the reader (SPEC §1.3: every
    request read before stdin's end is answered before the process exits). A send's `drain` waits
    only until the buffer is under its high-water mark, so an answer larger than the pipe's
    capacity (a tools/list is over 64 KiB) could still sit in it when the loop ends, and be lost to
    a reader that takes its time. A reader that never reads is waited for FLUSH_S at most; one that went
    away needs nothing more."""
    # A ConnectionError: the reader is gone, there is no one left to write to.
    with anyio.CancelScope(shield=True), anyio.move_on_after(FLUSH_S), suppress(ConnectionError):
        await writer.flush()


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
