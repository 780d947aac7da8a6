"""The read side of line-framed JSON-RPC over a pipe, on the event loop: one message per line.

Facing a client `LineReader` is the JSON-RPC edge (edge.py); a `Divert` may take lines before it
parses them (diverting.py). The write side is writer.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from colibri.pipes import edge
from colibri.pipes.diverting import Divert, DivertingReader
from colibri.pipes.streams_base import ClosedOnExit, ReceiveIteration

LINE_LIMIT = 64 * 1024 * 1024  # the default of COLIBRI_MAX_MESSAGE_BYTES

log = logging.getLogger("colibri.pipes")


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
