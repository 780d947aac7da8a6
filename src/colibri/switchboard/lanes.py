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
import json
import logging
from collections.abc import Callable
from itertools import count
from typing import Any

import anyio

from colibri.pipes import LineWriter
from colibri.switchboard.contracts import Progress
from colibri.switchboard.errors import CallTimedOut, ConnectionLost, MalformedResult, NotSent, PeerError

log = logging.getLogger("colibri.switchboard")

PREFIX = "sb-"
_MARK = b'"sb-'
SETTLE_S = 1.0

Stamp = Callable[[dict[str, Any], dict[str, Any]], None]


def dumps(message: dict[str, Any]) -> bytes:
    # ASCII escapes: a lone surrogate read from one side stays valid JSON on the other.
    return json.dumps(message, separators=(",", ":")).encode()


class _Pending:
    """One call in flight on the lane: its answer, its deadline and its progress forwards."""

    __slots__ = ("forwards", "future", "on_progress", "timeout", "timer")

    def __init__(self, future: asyncio.Future[dict[str, Any]], timeout: float, on_progress: Progress | None):
        self.future = future
        self.timeout = timeout
        self.on_progress = on_progress
        self.forwards: list[asyncio.Task[None]] = []
        # A timer, not a cancel scope: the deadline moves with progress, and this is the hot path.
        self.timer = future.get_loop().call_later(timeout, self._expire)

    def _expire(self) -> None:
        if not self.future.done():
            self.future.set_exception(CallTimedOut(f"no answer within {self.timeout:g} s"))

    def progressed(self, params: dict[str, Any]) -> None:
        progress, total, message = params.get("progress"), params.get("total"), params.get("message")
        if not isinstance(progress, int | float) or not (total is None or isinstance(total, int | float)):
            log.debug("dropped a malformed progress notification: %r", params)
            return
        # Slow is not down: news of progress pushes the deadline out by another timeout.
        self.timer.cancel()
        self.timer = self.future.get_loop().call_later(self.timeout, self._expire)
        if self.on_progress is not None:
            text = message if isinstance(message, str) else None
            coroutine = self.on_progress(float(progress), None if total is None else float(total), text)
            self.forwards.append(asyncio.ensure_future(coroutine))

    async def settled(self) -> None:
        """Let the progress forwards already under way reach the client before the answer does."""
        if self.forwards:
            with anyio.move_on_after(SETTLE_S):
                await asyncio.gather(*self.forwards, return_exceptions=True)


class DownstreamLane:
    """The lean lane of one stdio connection (a `pipes.Divert` on the downstream's read side)."""

    def __init__(self) -> None:
        self._writer: LineWriter | None = None
        self._pending: dict[str, _Pending] = {}
        self._ids = count(1)
        self._closed: str | None = None

    def attach(self, writer: LineWriter) -> None:
        self._writer = writer

    async def drained(self) -> None:
        return None

    def close(self, reason: str) -> None:
        """The connection ended: every call in flight has lost its answer."""
        self._closed = reason
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(
                    ConnectionLost(f"the connection closed before the answer came ({reason})")
                )

    def take(self, line: bytes) -> bool:
        if _MARK not in line:
            return False
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return False
        if not isinstance(message, dict):
            return False
        if "id" not in message and message.get("method") == "notifications/progress":
            params = message.get("params")
            token = params.get("progressToken") if isinstance(params, dict) else None
            pending = self._pending.get(token) if isinstance(token, str) else None
            if pending is None or not isinstance(params, dict):
                return False
            pending.progressed(params)
            return True
        key = message.get("id")
        if not isinstance(key, str) or not key.startswith(PREFIX) or "method" in message:
            return False
        pending = self._pending.get(key)
        if pending is None:
            log.debug("dropped a late answer to an abandoned call (%s)", key)
        elif not pending.future.done():
            pending.future.set_result(message)
        return True

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        on_progress: Progress | None,
        stamp: Stamp | None,
    ) -> dict[str, Any]:
        """Send tools/call and return the raw `result` object of its answer."""
        writer = self._writer
        if self._closed is not None or writer is None:
            raise NotSent("the connection is closed")
        key = f"{PREFIX}{next(self._ids)}"
        params: dict[str, Any] = {"name": name, "_meta": {"progressToken": key}}
        if arguments is not None:
            params["arguments"] = arguments
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": key, "method": "tools/call", "params": params}
        if stamp is not None:
            stamp(request, {})
        pending = _Pending(asyncio.get_running_loop().create_future(), timeout, on_progress)
        try:
            writer.write_line(dumps(request))
        except anyio.ClosedResourceError:
            raise NotSent("the connection closed before the request could be written") from None
        self._pending[key] = pending
        try:
            try:
                await writer.drain()
            except anyio.BrokenResourceError:
                raise NotSent("the connection closed before the request could be written") from None
            answer = await pending.future
        except CallTimedOut:
            self._abandon(key, "timed out")
            raise
        except anyio.get_cancelled_exc_class():
            self._abandon(key, "the client cancelled the call")
            raise
        finally:
            pending.timer.cancel()
            self._pending.pop(key, None)
        await pending.settled()
        return _result_of(answer)

    def _abandon(self, key: str, reason: str) -> None:
        """Tell the server to stop working on a call nobody waits for any more (MCP cancellation)."""
        if self._writer is None or self._closed is not None:
            return
        notice = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": key, "reason": reason},
        }
        try:
            self._writer.write_line(dumps(notice))
        except anyio.ClosedResourceError:
            log.debug("could not send the cancellation of %s: the connection is closed", key)


def _result_of(answer: dict[str, Any]) -> dict[str, Any]:
    if "result" in answer:
        result = answer["result"]
        if not isinstance(result, dict):
            raise MalformedResult(f"the answer is not a valid result: got {type(result).__name__}")
        return result
    error = answer.get("error")
    if (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
    ):
        raise PeerError(error["code"], error["message"], error.get("data"))
    raise MalformedResult("the answer has neither a result nor a valid error")
