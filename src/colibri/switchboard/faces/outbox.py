"""What one POST taken by the HTTP face's lean lane (post_lane.py) sends back, in order.

A call that sends nothing before its answer is answered as one `application/json` body, as the
MCP transport allows a server to answer any request (and as json_answers.py sends the SDK's
answer-only streams). A call whose downstream speaks first (progress, a log message: SPEC §21)
turns its POST's answer into an event stream from that first message on: each message is one
`message` event, the answer the last, as the SDK's transport would stream them on the call's own
POST and nowhere else.

A stdio downstream's answer is taken off its pipe the moment it is read (downstream/lanes.py), while
a log line written before it still travels through the SDK client's dispatch (a few turns of the
event loop) to the call's `LeanCaller`. So such an answer waits `SETTLE_TURNS` turns of the loop
before it goes: what the downstream said before its answer still comes before it, on the call's own
POST. (An HTTP downstream's messages for a call come on that call's own response, before its answer.)
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.types import Send

from colibri.switchboard.base import jsonlines

# Turns of the event loop a log line read before the answer takes to reach the call (the SDK
# client's read loop, its notification task, the callback): counted, not timed.
SETTLE_TURNS = 8
_SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache, no-transform")]


class Outbox:
    """The messages of one call on their way to its POST: the lane puts, the POST's handler writes."""

    __slots__ = ("_answer", "_closed", "_gone", "_messages", "_settle", "_waiter")

    def __init__(self) -> None:
        self._messages: list[dict[str, Any]] = []
        self._waiter: asyncio.Future[None] | None = None
        self._answer: dict[str, Any] | None = None
        self._settle = 0  # turns of the loop the answer waits for lines written before it
        self._closed = False  # the answer went (or the call was cancelled): nothing more comes
        self._gone = False  # the client went away: nothing more is written

    def put(self, message: dict[str, Any]) -> None:
        """A message tied to the call (a notification); ignored once the answer has gone."""
        if self._closed:
            return
        self._messages.append(message)
        self._wake()

    def answer(self, message: dict[str, Any], settle: int = 0) -> None:
        """The call's answer, the last message, once `settle` turns of the loop have passed."""
        if not self._closed:
            self._answer, self._settle = message, settle
            self._wake()

    def close(self) -> None:
        self._closed = True
        self._wake()

    def gone(self) -> None:
        """The client disconnected: its POST ends now; the call itself goes on, as on the SDK's path."""
        self._gone = True
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _taken(self) -> tuple[list[dict[str, Any]], bool]:
        """What has come since the last take (waiting for something), and whether it ends the call:
        the answer last, after the turns that let the lines written before it arrive."""
        while not self._messages and self._answer is None and not self._closed and not self._gone:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        if self._answer is not None:
            for _ in range(self._settle):
                await asyncio.sleep(0)
            self._messages.append(self._answer)
            self._closed = True
        taken, self._messages = self._messages, []
        return taken, self._closed

    async def deliver(self, send: Send, session_id: str) -> None:
        """Write the call's messages as its POST's answer: one JSON body, or a stream of events."""
        taken, ended = await self._taken()
        if self._gone:
            return
        session = (b"mcp-session-id", session_id.encode())
        if ended and len(taken) == 1:
            body = jsonlines.dumps(taken[0])
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": [*headers, session]})
            await send({"type": "http.response.body", "body": body, "more_body": False})
            return
        await send({"type": "http.response.start", "status": 200, "headers": [*_SSE_HEADERS, session]})
        while True:
            chunk = b"".join(b"event: message\r\ndata: " + jsonlines.dumps(m) + b"\r\n\r\n" for m in taken)
            if ended:
                await send({"type": "http.response.body", "body": chunk, "more_body": False})
                return
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            taken, ended = await self._taken()
            if self._gone:
                return
