"""A route that answers only a valid bearer token (the switchboard's `/metrics`, SPEC §14).

`/mcp` has the SDK's bearer middleware; a plain route such as `/metrics` or `/status` wraps its
endpoint with `token_required` so that, whenever the face has tokens, it says nothing without one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

Endpoint = Callable[[Request], Awaitable[Response]]
Verify = Callable[[str], Awaitable[bool]]


def presented_bearer(request: Request) -> str | None:
    """The token of an `Authorization: Bearer` header, or None."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


def token_required(endpoint: Endpoint, verify: Verify | None) -> Endpoint:
    """`endpoint` behind a bearer token that `verify` accepts; with no tokens (`verify` None,
    loopback only) the endpoint itself."""
    if verify is None:
        return endpoint

    async def checked(request: Request) -> Response:
        token = presented_bearer(request)
        if token is None or not await verify(token):
            return PlainTextResponse(
                "this endpoint needs a valid token: send Authorization: Bearer TOKEN",
                401,
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        return await endpoint(request)

    return checked
