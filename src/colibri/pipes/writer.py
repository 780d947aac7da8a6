"""The write side of line-framed JSON-RPC over a pipe: one message per line, waiting only when the
pipe pushes back. A `Divert` (diverting.py) writes its raw lines through the same writer.
"""

from __future__ import annotations

from contextvars import ContextVar

import anyio
from mcp.shared.message import SessionMessage

from colibri.pipes.streams_base import ClosedOnExit
from colibri.pipes.unpollable import ByteSink

# Set in the sending task when a message could not be written: the peer never got that request.
# The SDK reports a failed write and a connection lost mid-call alike; this tells them apart.
WRITE_FAILED: ContextVar[bool] = ContextVar("colibri_switchboard_write_failed", default=False)


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
