"""A downstream's read stream that says when it ends, and ties each message to its call.

The end is reported at once, so a lost connection is noticed at once. The SDK's dispatcher runs
the callbacks of each message in the context this stream names (`last_context`): on a stream that
says nothing of the request a message serves (stdio, legacy SSE), a call-bound message is given a
context whose `CALL` is the call `judge` ties it to, judged in the order of the wire (owners.py).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from colibri.pipes import ReceiveIteration
from colibri.switchboard.downstream.owners import CALL, CALL_BOUND

# Ties a call-bound message to the `Caller` of its call, or to none (None).
Judge = Callable[[types.JSONRPCRequest | types.JSONRPCNotification], Any]


class WatchedReadStream(ReceiveIteration):
    """Delegates to the transport's read stream and calls `on_end` once when it ends."""

    def __init__(self, inner: Any, on_end: Callable[[], None], judge: Judge | None = None) -> None:
        self._inner = inner
        self._on_end = on_end
        self._judge = judge
        self._context: contextvars.Context | None = None

    @property
    def last_context(self) -> Any:
        if self._context is not None:
            return self._context
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise
        self._context = None
        if self._judge is not None and isinstance(item, SessionMessage):
            message = item.message
            if (
                isinstance(message, types.JSONRPCRequest | types.JSONRPCNotification)
                and message.method in CALL_BOUND
            ):
                # A context per message: whatever the stream's own says, its call is judged here.
                context = contextvars.copy_context()
                context.run(CALL.set, self._judge(message))
                self._context = context
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> WatchedReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
