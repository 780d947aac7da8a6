"""The calls in flight on a lean lane to a downstream, kept alike by both lanes: stdio's (lanes.py)
and Streamable HTTP's (http_lane.py).

Each call is a `Pending`: where its outcome goes (`done`, exactly once), its deadline (a timer pushed
out by each progress notification), the progress forwards still under way and its span. A lane says
how a call is written and how an abandoned one is told to the server; `LaneCalls` does the rest the
same way for both: the request's shape, the deadline, `call` awaited, the end of the connection
failing every call in flight.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from itertools import count
from typing import Any

import anyio
from opentelemetry.trace import Span

from colibri.switchboard.base import (
    CallTimedOut,
    ConnectionLost,
    Done,
    DownstreamError,
    Notify,
    NotSent,
    Progress,
    spans,
)
from colibri.switchboard.downstream.statement import SENT_META

log = logging.getLogger("colibri.switchboard")

# The lanes' request ids: strings the SDK never uses (it numbers its own requests), so each side
# only ever sees its own answers.
PREFIX = "sb-"
SETTLE_S = 1.0

Stamp = Callable[[dict[str, Any], dict[str, Any]], None]


class Pending:
    """One call in flight on the lane: where its outcome goes, its deadline, its progress forwards."""

    __slots__ = ("done", "forwards", "on_progress", "span", "timeout", "timer")

    def __init__(self, timer: asyncio.TimerHandle, timeout: float, on_progress: Notify | None, done: Done):
        self.span: Span | None = None
        self.done = done
        self.timeout = timeout
        self.on_progress = on_progress
        self.forwards: list[asyncio.Future[None]] = []
        # A timer, not a cancel scope: the deadline moves with progress, and this is the hot path.
        self.timer = timer

    def progressed(self, params: dict[str, Any], renew: Callable[[], asyncio.TimerHandle]) -> None:
        progress, total, message = params.get("progress"), params.get("total"), params.get("message")
        if not isinstance(progress, int | float) or not (total is None or isinstance(total, int | float)):
            log.debug("dropped a malformed progress notification: %r", params)
            return
        # Slow is not down: news of progress pushes the deadline out by another timeout.
        self.timer.cancel()
        self.timer = renew()
        if self.on_progress is not None:
            text = message if isinstance(message, str) else None
            forwarded = self.on_progress(float(progress), None if total is None else float(total), text)
            if inspect.isawaitable(forwarded):
                self.forwards.append(asyncio.ensure_future(forwarded))

    async def settled(self) -> None:
        """Let the progress forwards already under way reach the client before the answer does."""
        if self.forwards:
            with anyio.move_on_after(SETTLE_S):
                await asyncio.gather(*self.forwards, return_exceptions=True)


class LaneCalls:
    """The calls in flight on one lane. A lane writes a call (`send`, which registers it with
    `_pending_for`) and tells the server of an abandoned one (`abandon`, which `_forget`s it)."""

    def __init__(self) -> None:
        self._pending: dict[str, Pending] = {}
        self._ids = count(1)
        self._closed: str | None = None

    def send(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        on_progress: Notify | None,
        stamp: Stamp | None,
        *,
        done: Done,
    ) -> str:
        raise NotImplementedError

    def abandon(self, key: str, reason: str) -> None:
        raise NotImplementedError

    async def _flush(self) -> None:
        """Wait until what `send` wrote has left (stdio's pipe drains; an HTTP POST needs nothing)."""

    def close(self, reason: str) -> None:
        """The connection ended: every call in flight has lost its answer."""
        if self._closed is None:
            self._closed = reason
        for key in list(self._pending):
            self._finish(key, ConnectionLost(f"the connection closed before the answer came ({reason})"))

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        on_progress: Progress | None,
        stamp: Stamp | None,
    ) -> dict[str, Any]:
        """`send`, awaited: the raw `result` object of the answer, or its `DownstreamError` raised."""
        future: asyncio.Future[dict[str, Any] | DownstreamError] = asyncio.get_running_loop().create_future()

        def done(outcome: dict[str, Any] | DownstreamError) -> None:
            # The awaiting task may have been cancelled this very turn, before it could abandon the call.
            if not future.done():
                future.set_result(outcome)

        key = self.send(name, arguments, timeout, on_progress, stamp, done=done)
        pending = self._pending[key]
        try:
            await self._flush()
            outcome = await future
        except anyio.BrokenResourceError:
            self._forget(key)
            raise NotSent("the connection closed before the request could be written") from None
        except anyio.get_cancelled_exc_class():
            self.abandon(key, "the client cancelled the call")
            raise
        if isinstance(outcome, DownstreamError):
            raise outcome
        await pending.settled()
        return outcome

    def _request(self, name: str, arguments: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
        """A new call's key and its tools/call request, the key its progress token too."""
        key = f"{PREFIX}{next(self._ids)}"
        params: dict[str, Any] = {"name": name, "_meta": {"progressToken": key, **(SENT_META.get() or {})}}
        if arguments is not None:
            params["arguments"] = arguments
        return key, {"jsonrpc": "2.0", "id": key, "method": "tools/call", "params": params}

    def _pending_for(
        self, key: str, timeout: float, on_progress: Notify | None, done: Done, span: Span | None
    ) -> None:
        self._pending[key] = pending = Pending(self._timer(key, timeout), timeout, on_progress, done)
        pending.span = span

    def _progressed(self, key: str, params: dict[str, Any]) -> None:
        pending = self._pending.get(key)
        if pending is not None:
            pending.progressed(params, lambda: self._timer(key, pending.timeout))

    def _timer(self, key: str, timeout: float) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(timeout, self._expire, key, timeout)

    def _expire(self, key: str, timeout: float) -> None:
        pending = self._pending.get(key)
        if pending is not None:
            self.abandon(key, "timed out")
            pending.done(CallTimedOut(f"no answer within {timeout:g} s"))

    def _forget(self, key: str, error: str | None = None) -> Pending | None:
        pending = self._pending.pop(key, None)
        if pending is not None:
            pending.timer.cancel()
            spans.end(pending.span, error)
        return pending

    def _finish(self, key: str, outcome: dict[str, Any] | DownstreamError) -> None:
        pending = self._forget(key, type(outcome).__name__ if isinstance(outcome, DownstreamError) else None)
        if pending is not None:
            pending.done(outcome)
