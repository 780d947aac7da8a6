"""Headers every answer carries: no page of ours can be framed (clickjacking) or MIME-sniffed."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

FRAME_ANCESTORS = "frame-ancestors 'none'"


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                policy = headers.get("content-security-policy")
                if policy is None:
                    headers["Content-Security-Policy"] = FRAME_ANCESTORS
                elif "frame-ancestors" not in policy:
                    headers["Content-Security-Policy"] = f"{policy}; {FRAME_ANCESTORS}"
                headers["X-Frame-Options"] = "DENY"
                headers["X-Content-Type-Options"] = "nosniff"
            await send(message)

        await self.app(scope, receive, send_with_headers)
