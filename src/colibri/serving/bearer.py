"""A route that answers only a valid bearer token (the switchboard's `/metrics`, SPEC §14), and
the log of refused tokens.

`/mcp` has the SDK's bearer middleware; a plain route such as `/metrics` or `/status` wraps its
endpoint with `token_required` so that, whenever the face has tokens, it says nothing without one.
`RefusalLog` says why a token was refused without flooding the log when a client keeps trying.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

Endpoint = Callable[[Request], Awaitable[Response]]
Verify = Callable[[str], Awaitable[bool]]


def presented_bearer(request: Request) -> str | None:
    """The token of an `Authorization: Bearer` header, or None."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


def token_required(endpoint: Endpoint, verify: Verify | None, challenge: str | None = None) -> Endpoint:
    """`endpoint` behind a bearer token that `verify` accepts; with no tokens (`verify` None,
    loopback only) the endpoint itself. `challenge` is the refusal's `WWW-Authenticate` (the face's
    RFC 9728 one, SPEC §20), by default a bare `invalid_token`."""
    if verify is None:
        return endpoint
    refusal = challenge or 'Bearer error="invalid_token"'

    async def checked(request: Request) -> Response:
        token = presented_bearer(request)
        if token is None or not await verify(token):
            return PlainTextResponse(
                "this endpoint needs a valid token: send Authorization: Bearer TOKEN",
                401,
                headers={"WWW-Authenticate": refusal},
            )
        return await endpoint(request)

    return checked


REFUSALS_EVERY_S = 60.0


@dataclass
class _Quiet:
    logged_at: float
    suppressed: int = 0


class RefusalLog:
    """Logs a refused token at info level, at most once per reason (`revoked`, `expired`,
    `unknown`, ...) every `every_s` seconds; the next line says how many it kept quiet. The
    message names what is known of the token (its name), never the token itself."""

    def __init__(
        self,
        log: logging.Logger,
        every_s: float = REFUSALS_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = log
        self._every_s = every_s
        self._clock = clock
        self._last: dict[str, _Quiet] = {}

    def refused(self, reason: str, message: str) -> None:
        now = self._clock()
        last = self._last.get(reason)
        if last is not None and now - last.logged_at < self._every_s:
            last.suppressed += 1
            return
        more = ""
        if last is not None and last.suppressed:
            more = f" ({last.suppressed} more {reason} token(s) refused since the last such line, not logged)"
        self._log.info("401: %s%s", message, more)
        self._last[reason] = _Quiet(now)
