"""stdin and stdout that the event loop cannot poll: a regular file, /dev/null.

`colibri serve < requests.jsonl > answers.jsonl` is a fair way to run a batch, and a terminal or
a file is what a person's shell gives. The loop's pipe transports take only pipes, sockets and
terminals; for anything else the runner used the SDK's own stdio transport, which drops a
malformed line without an answer (SPEC §14: every malformed line is answered, the first one of a
session included). These two stand in for the loop's transports instead, so every kind of stdin
and stdout goes through the same reader and edge:

- `read_side` feeds the reader from a thread (a regular file never blocks for long), pausing when
  the reader holds enough, as a pipe transport would;
- `write_side` writes each line straight to the file (writes to a file or /dev/null do not push back).
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from typing import IO, Protocol


class ByteSink(Protocol):
    """What `LineWriter` needs of `asyncio.StreamWriter`."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def is_closing(self) -> bool: ...

    def close(self) -> None: ...


class OutputSink(ByteSink, Protocol):
    """Our own output: it can also wait until everything written has left it."""

    async def flush(self) -> None: ...


async def read_side(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, source: IO[bytes]
) -> asyncio.ReadTransport:
    """A transport feeding `reader` from `source`: the loop's pipe transport where it can poll it,
    else a thread's."""
    if not pollable(source):
        return _ThreadFeed(loop, asyncio.StreamReaderProtocol(reader), source)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
    return transport


async def write_side(loop: asyncio.AbstractEventLoop, sink: IO[bytes]) -> OutputSink:
    """A writer to `sink`: the loop's pipe transport where it can poll it, else plain writes."""
    if not pollable(sink):
        return _FileSink(sink)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
    return _PipeSink(transport, protocol, None, loop)


class _PipeSink(asyncio.StreamWriter):
    """The loop's pipe writer, which can also wait until all it holds has reached the pipe."""

    async def flush(self) -> None:
        # `drain` returns once the buffer is under the high-water mark; with the mark at 0 it
        # returns only when the buffer is empty.
        self.transport.set_write_buffer_limits(high=0)
        await self.drain()


def pollable(file: IO[bytes]) -> bool:
    """A pipe, a socket or a terminal: what the loop can wait on. (/dev/null is a character device
    too, but registers without ever reporting its end.)"""
    mode = os.fstat(file.fileno()).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or file.isatty()


class _ThreadFeed(asyncio.ReadTransport):
    """Reads `source` in a daemon thread and hands each chunk to the protocol on the loop."""

    CHUNK = 64 * 1024

    def __init__(
        self, loop: asyncio.AbstractEventLoop, protocol: asyncio.StreamReaderProtocol, source: IO[bytes]
    ) -> None:
        super().__init__()
        self._loop = loop
        self._protocol = protocol
        self._source = source
        self._wanted = threading.Event()  # cleared while the reader asks to pause
        self._wanted.set()
        self._closing = False
        protocol.connection_made(self)
        threading.Thread(target=self._run, name="colibri-stdin", daemon=True).start()

    def _run(self) -> None:
        try:
            while self._wanted.wait() and not self._closing:
                chunk = self._source.read(self.CHUNK)
                if not chunk:
                    break
                self._loop.call_soon_threadsafe(self._protocol.data_received, chunk)
        except (OSError, ValueError):  # closed under the read: the same end as EOF
            pass
        finally:
            self._loop.call_soon_threadsafe(self._end)

    def _end(self) -> None:
        if not self._closing:
            self._protocol.eof_received()

    def pause_reading(self) -> None:
        self._wanted.clear()

    def resume_reading(self) -> None:
        self._wanted.set()

    def is_reading(self) -> bool:
        return self._wanted.is_set()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True
        self._wanted.set()  # a paused thread wakes to see it is done


class _FileSink:
    """Blocking writes to a file; nothing to wait for."""

    def __init__(self, sink: IO[bytes]) -> None:
        self._sink = sink
        self._closed = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = self._sink.write(view) or 0
            view = view[written:]

    async def drain(self) -> None:
        if self._closed:
            raise ConnectionResetError("the output is closed")

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True
        self._sink.close()

    async def flush(self) -> None:
        """Nothing is buffered here: every write has reached the file."""
