"""The Host/Origin allow-list on every route: a rebound DNS name reads and posts nothing.

A foreign Host is 421 (Misdirected Request) and a foreign Origin 403, as the SDK answers at
`/mcp`; here the same rule covers the pages, the forms and the probes before any route runs.
"""

from __future__ import annotations

import logging

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from colibri.serving.hosts import AllowedHosts

log = logging.getLogger("colibri.http")


class HostCheck:
    def __init__(self, app: ASGIApp, hosts: AllowedHosts) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host, origin = headers.get("host"), headers.get("origin")
        if not self.hosts.allows_host(host):
            log.warning("refused a request for Host %r (not a name of this server)", (host or "")[:100])
            refusal = "the Host header does not name this server; use its address or an --allow-host name"
            await PlainTextResponse(refusal, 421)(scope, receive, send)
        elif not self.hosts.allows_origin(origin):
            log.warning("refused a request from Origin %r (not this server)", (origin or "")[:100])
            await PlainTextResponse("requests from another site's pages are refused", 403)(
                scope, receive, send
            )
        else:
            await self.app(scope, receive, send)
