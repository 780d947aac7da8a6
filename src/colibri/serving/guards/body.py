"""Request bodies: capped before they are read, and due within a time limit.

A declared Content-Length over the path's cap is refused at once; a body without one (chunked)
is read only up to the cap. Either way 413; uvicorn then discards whatever of the body still
comes (nothing is kept) until the connection's header timeout, so the client reads the 413
instead of a reset. The whole body must arrive within `within_s` of the request's start, else
408 and the connection is closed: a client that sends a byte a second would otherwise hold a
connection (and its buffer) forever. The body is read here, then replayed to the app, so nothing
behind this reads more than the cap.
"""

from __future__ import annotations

from collections.abc import Callable

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
        declared = Headers(scope=scope).get("content-length", "")  # h11 has checked it is a number
        if declared.isdigit() and int(declared) > limit:
            await _refuse(413, too_large, scope, receive, send)
            return
        try:
            with anyio.fail_after(self.within_s):
                messages = await _read(receive, limit)
        except BodyTooLarge:
            await _refuse(413, too_large, scope, receive, send)
            return
        except TimeoutError:
            late = f"the request body did not arrive within {self.within_s:g} s (COLIBRI_HTTP_BODY_TIMEOUT_S)"
            await _refuse(408, late, scope, receive, send, close=True)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


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
