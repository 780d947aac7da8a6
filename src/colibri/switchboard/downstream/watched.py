"""A downstream's read stream that says when it ends, and ties each message to its call.

The end is reported at once, so a lost connection is noticed at once. The SDK's dispatcher runs
the callbacks of each message in the context this stream names (`last_context`): on a stream that
says nothing of the request a message serves (stdio, legacy SSE), a call-bound message is given a
context whose `CALL` is the call `judge` ties it to, judged in the order of the wire (owners.py).

A Streamable HTTP connection's lean lane (http_lane.py) reads its calls' streams itself, and hands
what they carry besides progress and the answer (log lines, the server's own requests) to `inject`:
the SDK receives it next, in the context of the call that sent it, as if it had read it itself.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
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
        self._injected: deque[tuple[SessionMessage, contextvars.Context]] = deque()
        self._wake: asyncio.Event | None = None  # made at the first injection: stdio never pays
        self._next: asyncio.Future[tuple[SessionMessage | Exception, contextvars.Context | None]] | None = (
            None
        )

    def inject(self, item: SessionMessage, context: contextvars.Context) -> None:
        """`item` to be received next, dispatched in `context` (see the module)."""
        self._injected.append((item, context))
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.set()

    @property
    def last_context(self) -> Any:
        if self._context is not None:
            return self._context
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        if self._wake is None:
            item, self._context = await self._received()
            return item
        while not self._injected:
            # Wait for the next of either: a message of the inner stream is kept if an injection wins.
            self._wake.clear()
            inner = self._next = self._next or asyncio.ensure_future(self._received())
            woken = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait((inner, woken), return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                inner.cancel()
                self._next = None
                raise
            finally:
                woken.cancel()
            if inner.done():
                self._next = None
                item, self._context = inner.result()
                return item
        item, context = self._injected.popleft()
        self._context = context
        return item

    async def _received(self) -> tuple[SessionMessage | Exception, contextvars.Context | None]:
        """The inner stream's next item, and the context it is to be dispatched in (None: the
        inner stream's own)."""
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise
        if self._judge is not None and isinstance(item, SessionMessage):
            message = item.message
            if (
                isinstance(message, types.JSONRPCRequest | types.JSONRPCNotification)
                and message.method in CALL_BOUND
            ):
                # A context per message: whatever the stream's own says, its call is judged here.
                context = contextvars.copy_context()
                context.run(CALL.set, self._judge(message))
                return item, context
        return item, None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> WatchedReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
