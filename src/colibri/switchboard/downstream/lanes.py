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

import logging
from typing import Any

import anyio

from colibri.pipes import LineWriter
from colibri.switchboard.base import (
    Done,
    DownstreamError,
    MalformedResult,
    Notify,
    NotSent,
    PeerError,
    jsonlines,
    spans,
)
from colibri.switchboard.downstream.lane_calls import PREFIX, LaneCalls, Stamp
from colibri.switchboard.downstream.owners import CALL_BOUND, WireOwners

log = logging.getLogger("colibri.switchboard")

_MARK = b'"sb-'
_METHOD = b'"method"'


class DownstreamLane(LaneCalls):
    """The lean lane of one stdio connection (a `pipes.Divert` on the downstream's read side).

    `send` writes a call and returns at once; its outcome — the raw result, or the `DownstreamError`
    it came to — is handed to its `done` callback from the read side, the timer or `close`, exactly
    once, without a task in between. `call` is the same, awaited.
    """

    def __init__(self, judged: WireOwners | None = None) -> None:
        super().__init__()
        self._writer: LineWriter | None = None
        # The call-bound lines are judged here, the moment they are read (owners.py).
        self.judged = judged or WireOwners()

    def attach(self, writer: LineWriter) -> None:
        self._writer = writer

    async def drained(self) -> None:
        return None

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
            self._progressed(token, params)
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
        key, request = self._request(name, arguments)
        if stamp is not None:
            stamp(request, {})
        span = spans.sending(name, request["params"]["_meta"])
        try:
            writer.write_line(jsonlines.dumps(request))
        except anyio.ClosedResourceError:
            raise NotSent("the connection closed before the request could be written") from None
        if writer.closing:  # the write itself failed: the pipe is gone, and the request with it
            raise NotSent("the connection closed before the request could be written")
        self._pending_for(key, timeout, on_progress, done, span)
        return key

    async def _flush(self) -> None:
        if self._writer is not None:
            await self._writer.drain()

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
