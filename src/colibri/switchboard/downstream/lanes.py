"""The lean lane to a stdio downstream: tools/call written and answered as JSON lines, beside the SDK.

A routed call through two full SDK stacks (the server's dispatch, then a client round trip) cost
more than the whole direct round trip. On a stdio downstream the call is instead written as one
JSON line on the same pipe the SDK client writes to, and its answer is taken off the read side
before the SDK parses it. The ids are strings the SDK never uses ("sb-N"; the SDK numbers its own
requests), so each side only ever sees its own answers. The SDK still does the handshake, the
checks, every list and every relay; this lane carries tools/call and nothing else.

The semantics are the SDK path's: the per-tool timeout, pushed out by each progress notification
(forwarded to the caller), `notifications/cancelled` sent downstream when the call is abandoned
(timeout or the client's cancellation), the end of the connection failing the calls in flight, and
the same errors (`NotSent`, `ConnectionLost`, `CallTimedOut`, `PeerError`, `MalformedResult`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from functools import partial
from itertools import count
from typing import Any

import anyio
from opentelemetry.trace import Span

from colibri.pipes import LineWriter
from colibri.switchboard.base import (
    CallTimedOut,
    ConnectionLost,
    Done,
    DownstreamError,
    MalformedResult,
    Notify,
    NotSent,
    PeerError,
    Progress,
    jsonlines,
    spans,
)
from colibri.switchboard.downstream.owners import CALL_BOUND, WireOwners
from colibri.switchboard.downstream.statement import SENT_META

log = logging.getLogger("colibri.switchboard")

PREFIX = "sb-"
_MARK = b'"sb-'
_METHOD = b'"method"'
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


class DownstreamLane:
    """The lean lane of one stdio connection (a `pipes.Divert` on the downstream's read side).

    `send` writes a call and returns at once; its outcome — the raw result, or the `DownstreamError`
    it came to — is handed to its `done` callback from the read side, the timer or `close`, exactly
    once, without a task in between. `call` is the same, awaited.
    """

    def __init__(self, judged: WireOwners | None = None) -> None:
        self._writer: LineWriter | None = None
        self._pending: dict[str, Pending] = {}
        self._ids = count(1)
        self._closed: str | None = None
        # The call-bound lines are judged here, the moment they are read (owners.py).
        self.judged = judged or WireOwners()

    def attach(self, writer: LineWriter) -> None:
        self._writer = writer

    async def drained(self) -> None:
        return None

    def close(self, reason: str) -> None:
        """The connection ended: every call in flight has lost its answer."""
        if self._closed is None:
            self._closed = reason
        for key in list(self._pending):
            self._finish(key, ConnectionLost(f"the connection closed before the answer came ({reason})"))

    def take(self, line: bytes) -> bool:
        marked = _MARK in line
        if not marked and _METHOD not in line:
            return False
        try:
            message = jsonlines.loads(line)
        except (ValueError, RecursionError):
            return False
        if not isinstance(message, dict):
            return False
        if message.get("method") in CALL_BOUND:
            self.judged.read(message)
            return False
        if not marked:
            return False
        if "id" not in message and message.get("method") == "notifications/progress":
            params = message.get("params")
            token = params.get("progressToken") if isinstance(params, dict) else None
            if not isinstance(token, str) or token not in self._pending or not isinstance(params, dict):
                return False
            pending = self._pending[token]
            pending.progressed(params, partial(self._timer, token, pending.timeout))
            return True
        key = message.get("id")
        if not isinstance(key, str) or not key.startswith(PREFIX) or "method" in message:
            return False
        if key not in self._pending:
            log.debug("dropped a late answer to an abandoned call (%s)", key)
        else:
            self._finish(key, outcome_of(message))
        return True

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
        """Write tools/call; `done` gets its outcome. Returns the call's key (for `abandon`)."""
        writer = self._writer
        if self._closed is not None or writer is None:
            raise NotSent("the connection is closed")
        key = f"{PREFIX}{next(self._ids)}"
        params: dict[str, Any] = {"name": name, "_meta": {"progressToken": key, **(SENT_META.get() or {})}}
        if arguments is not None:
            params["arguments"] = arguments
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": key, "method": "tools/call", "params": params}
        if stamp is not None:
            stamp(request, {})
        span = spans.sending(name, params["_meta"])
        try:
            writer.write_line(jsonlines.dumps(request))
        except anyio.ClosedResourceError:
            raise NotSent("the connection closed before the request could be written") from None
        if writer.closing:  # the write itself failed: the pipe is gone, and the request with it
            raise NotSent("the connection closed before the request could be written")
        self._pending[key] = pending = Pending(self._timer(key, timeout), timeout, on_progress, done)
        pending.span = span
        return key

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
            if self._writer is not None:
                await self._writer.drain()
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

    def abandon(self, key: str, reason: str) -> None:
        """Nobody waits for this call any more: forget it and tell the server (MCP cancellation)."""
        if self._forget(key) is None or self._writer is None or self._closed is not None:
            return
        notice = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": key, "reason": reason},
        }
        try:
            self._writer.write_line(jsonlines.dumps(notice))
        except anyio.ClosedResourceError:
            log.debug("could not send the cancellation of %s: the connection is closed", key)

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


def outcome_of(answer: dict[str, Any]) -> dict[str, Any] | DownstreamError:
    """The raw `result` object of an answer, or what is wrong with it."""
    if "result" in answer:
        result = answer["result"]
        if not isinstance(result, dict):
            return MalformedResult(f"the answer is not a valid result: got {type(result).__name__}")
        return result
    error = answer.get("error")
    if (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
    ):
        return PeerError(error["code"], error["message"], error.get("data"))
    return MalformedResult("the answer has neither a result nor a valid error")
