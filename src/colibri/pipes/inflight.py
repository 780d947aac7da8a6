"""Every request read before the end of input is answered before the server lets go of it.

The SDK's dispatcher treats the end of its read stream as the end of the connection: it cancels
the handlers still running and answers them "Connection closed". A client that pipes its requests
and closes stdin (`colibri serve < requests.jsonl`, or a script that writes and closes at once) would
lose exactly the answers it asked for. `answer_before_eof` wraps a (read, write) stream pair so the
end of input reaches the dispatcher only once every request read so far has had its answer written
(or the peer cancelled it), bounded by `limit_s` so a handler that never ends cannot hold the
process forever.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from colibri.pipes.streams_base import ClosedOnExit, ReceiveIteration

log = logging.getLogger("colibri")

DEFAULT_LIMIT_S = 60.0
_CANCELLED = "notifications/cancelled"


class InFlight:
    """The ids of requests read and not yet answered (a count per id: ids may repeat)."""

    def __init__(self) -> None:
        self._open: Counter[types.RequestId] = Counter()
        self._idle = anyio.Event()
        self._idle.set()

    def __len__(self) -> int:
        return sum(self._open.values())

    def received(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self._open[message.id] += 1
            if self._idle.is_set():
                self._idle = anyio.Event()
        elif isinstance(message, types.JSONRPCNotification) and message.method == _CANCELLED:
            # The dispatcher never answers a request its peer cancelled.
            params = message.params or {}
            request_id = params.get("requestId")
            if isinstance(request_id, int | str):
                self._settle(request_id)

    def answered(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._settle(message.id)

    async def wait_answered(self, limit_s: float) -> bool:
        """True when every request read has been answered; False when `limit_s` ran out first."""
        with anyio.move_on_after(limit_s):
            await self._idle.wait()
            return True
        return False

    def _settle(self, request_id: types.RequestId) -> None:
        if self._open[request_id] <= 1:
            self._open.pop(request_id, None)
        else:
            self._open[request_id] -= 1
        if not self._open:
            self._idle.set()


class _Reader(ReceiveIteration, ClosedOnExit):
    """The read stream, holding its end back until every request read has been answered."""

    def __init__(self, inner: Any, inflight: InFlight, limit_s: float) -> None:
        self._inner = inner
        self._inflight = inflight
        self._limit_s = limit_s

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except anyio.EndOfStream:
            if len(self._inflight) and not await self._inflight.wait_answered(self._limit_s):
                log.warning(
                    "end of input: %d request(s) still unanswered after %gs; closing anyway",
                    len(self._inflight),
                    self._limit_s,
                )
            raise
        if isinstance(item, SessionMessage):
            self._inflight.received(item.message)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Writer(ClosedOnExit):
    """The write stream, noting each answer as written (or as lost, when the write fails)."""

    def __init__(self, inner: Any, inflight: InFlight) -> None:
        self._inner = inner
        self._inflight = inflight

    async def send(self, item: SessionMessage, /) -> None:
        try:
            await self._inner.send(item)
        finally:
            # A failed write cannot be retried: nobody is left to read it, so stop waiting for it.
            self._inflight.answered(item.message)

    async def aclose(self) -> None:
        await self._inner.aclose()


def answer_before_eof(
    read_stream: Any, write_stream: Any, limit_s: float = DEFAULT_LIMIT_S
) -> tuple[Any, Any]:
    """The pair to hand to `Server.run` instead of (`read_stream`, `write_stream`)."""
    inflight = InFlight()
    return _Reader(read_stream, inflight, limit_s), _Writer(write_stream, inflight)
