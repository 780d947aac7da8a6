"""One JSON body for a POST whose event stream would hold nothing but its answer (SPEC §25).

The SDK's Streamable HTTP transport answers every request POST with an SSE stream, so that what a
downstream sends in the course of the call (progress, log messages, elicitation: SPEC §21) reaches
the session that made it on that call's own stream. Most calls send nothing but their answer, and
for those the stream costs twice: the SDK's client stops reading at the answer, before the stream's
end, so its HTTP client cannot reuse the connection — every call through the face opened a new TCP
connection (measured: 300 sequential calls, ~290 connections left in TIME-WAIT).

`JsonAnswers` holds back the start of a POST's event stream until its first event: when that event
is the answer (a JSON-RPC result or error), the answer goes as `application/json` with its length,
as the MCP transport allows a server to answer any request; anything else first (a notification, a
request to the client, a keep-alive comment, an event with an id to resume from) lets the stream go
as it was, from its start, so every message tied to the call still travels on its own stream, in
order. The stream's own end is still awaited before the exchange completes, so the SDK closes it
as it always does.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_SSE = b"text/event-stream"
_DROPPED = frozenset({b"content-type", b"content-length", b"transfer-encoding", b"x-accel-buffering"})


class JsonAnswers:
    """ASGI middleware: an answer-only event stream of a POST goes as one JSON body (see the module)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        exchange = _Exchange(send)
        await self.app(scope, receive, exchange.send)
        await exchange.ended()


class _Exchange:
    """One POST's response on its way: held (its stream's start), streaming as is, or answered."""

    __slots__ = ("_answered", "_held", "_send", "_streaming")

    def __init__(self, send: Send) -> None:
        self._send = send
        self._held: Message | None = None
        self._streaming = False
        self._answered = False

    async def send(self, message: Message) -> None:
        if self._streaming:
            await self._send(message)
            return
        if self._answered:  # the rest of a stream whose answer went as JSON: only its end is sent
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if message["type"] == "http.response.start" and _is_event_stream(message):
            self._held = message
            return
        held, self._held = self._held, None
        if held is None or message["type"] != "http.response.body":
            self._streaming = True
            if held is not None:
                await self._send(held)
            await self._send(message)
            return
        answer = _sole_answer(message.get("body", b""))
        if answer is None:
            self._streaming = True
            await self._send(held)
            await self._send(message)
            return
        self._answered = True
        headers = [(name, value) for name, value in held.get("headers", ()) if name.lower() not in _DROPPED]
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
        await self._send({"type": "http.response.start", "status": held["status"], "headers": headers})
        # The whole answer now; the exchange completes when the stream ends (`send` above).
        more = bool(message.get("more_body", False))
        await self._send({"type": "http.response.body", "body": answer, "more_body": more})

    async def ended(self) -> None:
        """The app returned: a stream's start still held (it sent no event) goes out, empty."""
        held, self._held = self._held, None
        if held is not None:
            await self._send(held)
            await self._send({"type": "http.response.body", "body": b"", "more_body": False})


def _is_event_stream(message: Message) -> bool:
    return any(
        name.lower() == b"content-type" and value.startswith(_SSE)
        for name, value in message.get("headers", ())
    )


def _sole_answer(chunk: bytes) -> bytes | None:
    """The JSON of `chunk` when it is exactly one `message` event holding a JSON-RPC answer, else None."""
    data: list[bytes] = []
    event = b"message"
    lines = chunk.replace(b"\r\n", b"\n").split(b"\n")
    if lines[-2:] != [b"", b""]:  # not one whole event (a chunk ends where its event does)
        return None
    for line in lines[:-2]:
        field, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if field == b"data":
            data.append(value)
        elif field == b"event":
            event = value
        else:  # a comment (keep-alive), an id to resume from, a retry, a second event: a stream
            return None
    if event != b"message" or not data:
        return None
    body = b"\n".join(data)
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        return None
    is_answer = (
        isinstance(parsed, dict) and "method" not in parsed and ("result" in parsed or "error" in parsed)
    )
    return body if is_answer else None
