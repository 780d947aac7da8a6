"""How a client finds out what a face wants (SPEC §20 "Discovery for clients"): the RFC 9728
protected-resource metadata and the `WWW-Authenticate` challenge of every 401 and 403 of `/mcp`.

The metadata is public (RFC 9728) but stands behind the Host/Origin guard like every route; it is
served at both well-known paths, `/.well-known/oauth-protected-resource` and the same with the
resource's path (`/mcp`), which is where the MCP clients look first. `authorization_servers` is
left out until an issuer is configured: RFC 9728 §2 makes it optional, and naming this server as
its own issuer (the SDK's default) sent clients to look for an authorization server that is not
there. The challenge names every scope the resource supports, so a client asks for write access
unaided; `error="invalid_token"` only when a token was sent and refused (RFC 6750 §3.1).

`RequireBearer` takes the place of the SDK's `RequireAuthMiddleware` at `/mcp` (`protect`): the
SDK's bearer backend still proves the token, this only says no in the terms above. A token short
of the route's scope is a 403 `insufficient_scope`; a tools/call the token's scope does not admit
stays an MCP refusal inside a 200 (TOOL_NOT_ADMITTED, reason `scope`), which clients already handle.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, RequireAuthMiddleware
from mcp.server.auth.routes import build_resource_metadata_url
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

WELL_KNOWN = "/.well-known/oauth-protected-resource"
# The names a token's scopes are asked for by; settable once an issuer maps its own (SPEC §20).
SCOPES = ("colibri:read", "colibri:write")


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    """One face as a protected resource: `resource` is the URL clients use (`…/mcp`, or the ui's root)."""

    resource: str
    scopes: tuple[str, ...] = SCOPES
    authorization_servers: tuple[str, ...] = ()  # the issuers; none until one is configured

    @property
    def metadata_url(self) -> str:
        """Where the metadata of `resource` is (RFC 9728 §3.1: the well-known path before its path)."""
        return str(build_resource_metadata_url(AnyHttpUrl(self.resource)))

    def document(self) -> dict[str, object]:
        document: dict[str, object] = {"resource": self.resource}
        if self.authorization_servers:
            document["authorization_servers"] = list(self.authorization_servers)
        document["scopes_supported"] = list(self.scopes)
        document["bearer_methods_supported"] = ["header"]
        return document

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        """The `WWW-Authenticate` value of a refusal; `error` None when no token was sent."""
        parts = [f'resource_metadata="{self.metadata_url}"', f'scope="{" ".join(self.scopes)}"']
        if error is not None:
            parts.insert(0, f'error="{error}"')
        if description is not None:
            parts.append(f'error_description="{description}"')
        return "Bearer " + ", ".join(parts)


def metadata_routes(resource: ProtectedResource) -> list[Route]:
    """GET of the metadata at both well-known paths: the root one and `…/mcp` (the resource's own
    path; on the ui, whose resource is its root, the same document there too)."""
    body = json.dumps(resource.document()).encode()
    cached = {"Cache-Control": "public, max-age=3600"}

    async def metadata(request: Request) -> Response:
        return Response(body, media_type="application/json", headers=cached)

    own = AnyHttpUrl(resource.metadata_url).path or WELL_KNOWN
    paths = dict.fromkeys((WELL_KNOWN, f"{WELL_KNOWN}/mcp", own))
    return [Route(path, metadata, methods=["GET"]) for path in paths]


def _sent_a_bearer(scope: Scope) -> bool:
    return Headers(scope=scope).get("authorization", "").lower().startswith("bearer ")


class RequireBearer:
    """`app` only for a request whose bearer token the SDK's backend proved, holding `required`."""

    def __init__(self, app: ASGIApp, resource: ProtectedResource, required: Sequence[str]) -> None:
        self.app = app
        self.resource = resource
        self.required = tuple(required)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if not isinstance(user, AuthenticatedUser):
            if _sent_a_bearer(scope):
                answer = self._refusal(401, "invalid_token", "the bearer token is not valid here")
            else:
                answer = self._refusal(401, None, "send Authorization: Bearer TOKEN")
            await answer(scope, receive, send)
            return
        missing = [name for name in self.required if name not in user.scopes]
        if missing:
            description = f"the token lacks the scope {' '.join(missing)}"
            await self._refusal(403, "insufficient_scope", description)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, status: int, error: str | None, description: str) -> Response:
        # The body keeps the SDK's shape (clients show it); only the header leaves out the error
        # code when no token was sent.
        body = json.dumps({"error": error or "invalid_token", "error_description": description})
        challenge = self.resource.challenge(error, description if error else None)
        return Response(body, status, headers={"WWW-Authenticate": challenge}, media_type="application/json")


def protect(app: Starlette, resource: ProtectedResource, path: str = "/mcp") -> None:
    """Our challenge at `path` of the SDK's Streamable HTTP app (built with a token verifier) and our
    metadata at both well-known paths, in place of the SDK's own metadata route."""
    routes = app.router.routes
    for route in routes:
        if isinstance(route, Route) and route.path == path and isinstance(route.app, RequireAuthMiddleware):
            sdk = route.app
            route.app = RequireBearer(sdk.app, resource, sdk.required_scopes)
            break
    else:
        raise LookupError(f"the app has no bearer-protected route {path}: nothing to challenge for")
    routes[:] = [r for r in routes if not (isinstance(r, Route) and r.path.startswith(WELL_KNOWN))]
    routes[:0] = metadata_routes(resource)
