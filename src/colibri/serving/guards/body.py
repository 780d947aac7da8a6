"""Request bodies: capped, due within a time limit, and read only once the route asks for them.

A declared Content-Length over the path's cap is refused at once (413), from the header alone.
Anything else of the body is read only when the app first asks for it, so whatever the app checks
before (the bearer token of `/mcp`, `/metrics` and `/status`, a page's session cookie) is checked
before a byte of the body is taken: an unauthenticated peer gets its 401 while the body it
announced is still on its way, and the server never holds it (SPEC §21, credentials before
bodies). uvicorn keeps at most 64 KiB of an unread body and drops what comes after the answer.

When the app asks, the whole body is read here, up to the cap (a body without Content-Length is
read only up to it, then 413), and must have arrived within `within_s` of the request's start
(else 408 and the connection is closed: a client that sends a byte a second would otherwise hold
a connection, and its buffer, forever). A refusal is sent by this guard, and the app, stopped
where it asked for the body, is cancelled: nothing behind this reads more than the cap, and no
app sees a body cut short. A 413 leaves the connection open: uvicorn discards whatever of the
body still comes until the connection's header timeout, so the client reads the 413 instead of
a reset.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NoReturn

import anyio
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The cap of a path, and the variable that sets it (named in the refusal).
LimitFor = Callable[[str], tuple[int, str]]


class BodyTooLarge(Exception):
    """Raised while reading when the body passes the cap."""


class BodyLimit:
    def __init__(self, app: ASGIApp, limit_for: LimitFor, within_s: float) -> None:
        self.app = app
        self.limit_for = limit_for
        self.within_s = within_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, variable = self.limit_for(scope["path"])
        too_large = f"request body over {limit} bytes, the most {scope['path']} accepts (set by {variable})"
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")  # the HTTP parser has checked it is a number
        if declared.isdigit() and int(declared) > limit:
            await _refuse(413, too_large, scope, receive, send)
            return
        if declared in ("", "0") and "transfer-encoding" not in headers:
            # No body (a GET, a probe): nothing to cap or wait for. An event stream's first
            # receive (listening for the client's end) may come long after the deadline.
            await self.app(scope, receive, send)
            return
        await _Deferred(self, scope, receive, send, limit=limit, too_large=too_large).run()


class _Deferred:
    """One request whose body is read at the app's first `receive`, under the cap and the deadline."""

    def __init__(
        self, guard: BodyLimit, scope: Scope, receive: Receive, send: Send, *, limit: int, too_large: str
    ) -> None:
        self.guard, self.scope, self.receive, self.send = guard, scope, receive, send
        self.limit, self.too_large = limit, too_large
        self.due = time.monotonic() + guard.within_s
        self.buffered: list[Message] | None = None  # the body, once asked for
        self.started = False  # the app has begun its answer
        self.stopped = anyio.CancelScope()

    async def run(self) -> None:
        with self.stopped:
            await self.guard.app(self.scope, self.receive_body, self.send_answer)

    async def send_answer(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)

    async def receive_body(self) -> Message:
        if self.buffered is None:
            self.buffered = await self._read_all()
        return self.buffered.pop(0) if self.buffered else await self.receive()

    async def _read_all(self) -> list[Message]:
        try:
            with anyio.fail_after(max(0.0, self.due - time.monotonic())):
                return await _read(self.receive, self.limit)
        except BodyTooLarge:
            await self._stop(413, self.too_large)
        except TimeoutError:
            within = self.guard.within_s
            await self._stop(
                408, f"the request body did not arrive within {within:g} s (COLIBRI_HTTP_BODY_TIMEOUT_S)"
            )

    async def _stop(self, status: int, message: str) -> NoReturn:
        """Answer `status` (unless the app has begun an answer of its own), then end the app here."""
        if not self.started:
            await _refuse(status, message, self.scope, self.receive, self.send, close=status == 408)
        self.stopped.cancel()
        await anyio.sleep_forever()
        raise AssertionError("cancelled above")  # pragma: no cover


async def _read(receive: Receive, limit: int) -> list[Message]:
    """The body as one message (marked unfinished, and followed by the disconnect, when the
    client left before its end)."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return [{"type": "http.request", "body": bytes(body), "more_body": True}, message]
        body += message.get("body", b"")
        if len(body) > limit:
            raise BodyTooLarge
        if not message.get("more_body", False):
            return [{"type": "http.request", "body": bytes(body), "more_body": False}]


async def _refuse(
    status: int, message: str, scope: Scope, receive: Receive, send: Send, *, close: bool = False
) -> None:
    headers = {"Connection": "close"} if close else None
    await PlainTextResponse(message, status, headers=headers)(scope, receive, send)
