"""The checks every HTTP face runs in front of its routes (SPEC §14), composed in one place.

`guarded(app, hosts, limits)` wraps a face's whole ASGI app, outermost first:

- `headers.SecurityHeaders`: every answer forbids framing (`frame-ancestors 'none'`,
  `X-Frame-Options: DENY`) and MIME sniffing, refusals included.
- `host_check.HostCheck`: the Host must name this server (421) and any Origin too (403), on
  every route: `/mcp`, the pages, `/login`, the probes, `/metrics`, `/status`.
- `body.BodyLimit`: the body is capped before it is read (413) and must arrive in time (408); it
  is read only when the route asks for it, so a route's credentials are checked before it (SPEC §21).

The stack is fixed at start-up; `serve --http`, `colibri ui` and the switchboard's HTTP face each
call `guarded` once.
"""

from __future__ import annotations

from collections.abc import Collection

from starlette.types import ASGIApp

from colibri.serving.guards.body import BodyLimit
from colibri.serving.guards.headers import SecurityHeaders
from colibri.serving.guards.host_check import HostCheck
from colibri.serving.hosts import AllowedHosts
from colibri.serving.http_limits import HttpLimits

MCP_PATHS = ("/mcp",)


def guarded(
    app: ASGIApp, hosts: AllowedHosts, limits: HttpLimits, *, large_bodies: Collection[str] = MCP_PATHS
) -> ASGIApp:
    """`app` behind the checks; bodies of `large_bodies` paths may reach `limits.max_body_bytes`,
    every other path's `limits.max_form_bytes`."""

    def body_limit(path: str) -> tuple[int, str]:
        if path.rstrip("/") in large_bodies:
            return limits.max_body_bytes, "COLIBRI_HTTP_MAX_BODY_BYTES"
        return limits.max_form_bytes, "COLIBRI_HTTP_MAX_FORM_BYTES"

    stack: ASGIApp = BodyLimit(app, body_limit, limits.body_timeout_s)
    stack = HostCheck(stack, hosts)
    return SecurityHeaders(stack)
