"""At most N open MCP sessions per principal, in front of the SDK's session manager (SPEC §14).

The SDK caps sessions in all (`max_sessions`), so one token opening sessions in a loop could
take every place and lock the other tokens out. `PrincipalSessions` wraps the `/mcp` endpoint,
behind the bearer-token check (it reads the proved principal from the scope), and refuses a
request that would open one more session for a principal already holding its share: 503 with a
JSON-RPC error saying why, before the SDK sees it.

It keeps its own account from what passes through: a session is counted from the answer that
names its `mcp-session-id` until a DELETE of it succeeds, a request for it is answered 404 (the
SDK has forgotten it), or it has had no request in flight for the SDK's idle time (the SDK
closes it then; the account gives it a second more, so it never counts a place free early).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colibri.core.callers import LOCAL

log = logging.getLogger("colibri.http")

SESSION_HEADER = "mcp-session-id"
IDLE_MARGIN_S = 1.0


@dataclass(slots=True)
class _Session:
    principal: str
    in_flight: int = 0
    last_done: float = 0.0


class PrincipalSessions:
    def __init__(
        self,
        app: ASGIApp,
        per_principal: int,
        idle_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.per_principal = per_principal
        self.idle_s = idle_s
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        self._opening: dict[str, int] = {}  # requests that may open a session, by principal

    def held(self, principal: str) -> int:
        """Sessions the principal holds now, and the openings it has under way."""
        now = self._clock()
        for session_id, session in list(self._sessions.items()):
            if session.in_flight == 0 and now - session.last_done > self.idle_s + IDLE_MARGIN_S:
                del self._sessions[session_id]
        owned = sum(1 for session in self._sessions.values() if session.principal == principal)
        return owned + self._opening.get(principal, 0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        principal = principal_of(scope)
        session_id = Headers(scope=scope).get(SESSION_HEADER)
        if session_id is None:
            await self._opening_request(principal, scope, receive, send)
        else:
            await self._session_request(principal, session_id, scope, receive, send)

    async def _opening_request(self, principal: str, scope: Scope, receive: Receive, send: Send) -> None:
        if self.held(principal) >= self.per_principal:
            log.warning("refused a new MCP session for %s: it holds %d", principal, self.per_principal)
            await _too_many(principal, self.per_principal, self.idle_s)(scope, receive, send)
            return
        self._opening[principal] = self._opening.get(principal, 0) + 1
        opened: str | None = None

        async def noting_the_session(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened = MutableHeaders(scope=message).get(SESSION_HEADER)
                if opened is not None:
                    # Counted as a session from here, no longer as an opening: the request
                    # itself may take a while yet to wind down after its answer has gone.
                    self._sessions[opened] = _Session(principal, in_flight=1)
                    self._opened(principal)
            await send(message)

        try:
            await self.app(scope, receive, noting_the_session)
        finally:
            if opened is None:
                self._opened(principal)
            self._done(opened, principal, None)

    def _opened(self, principal: str) -> None:
        self._opening[principal] -= 1
        if not self._opening[principal]:
            del self._opening[principal]

    async def _session_request(
        self, principal: str, session_id: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        session = self._sessions.get(session_id)
        mine = session is not None and session.principal == principal
        if session is not None and mine:
            session.in_flight += 1
        status = 0

        async def noting_the_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, noting_the_status)
        finally:
            if session is not None and mine:
                self._done(
                    session_id, principal, status if scope["method"] == "DELETE" or status == 404 else None
                )

    def _done(self, session_id: str | None, principal: str, ending_status: int | None) -> None:
        session = None if session_id is None else self._sessions.get(session_id)
        if session_id is None or session is None or session.principal != principal:
            return
        session.in_flight -= 1
        session.last_done = self._clock()
        if ending_status == 404 or (ending_status is not None and ending_status < 400):
            del self._sessions[session_id]


def principal_of(scope: Scope) -> str:
    """The name of the token the bearer middleware proved, or `local` where none is required."""
    user = scope.get("user")
    return user.access_token.client_id if isinstance(user, AuthenticatedUser) else LOCAL.principal


def _too_many(principal: str, cap: int, idle_s: float) -> JSONResponse:
    message = (
        f"{principal!r} already holds {cap} open MCP sessions, the most one token may hold "
        f"(COLIBRI_HTTP_MAX_SESSIONS_PER_PRINCIPAL); end one with DELETE, reuse one, or wait until "
        f"one has been idle for {idle_s:g} s"
    )
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": message}}
    return JSONResponse(body, status_code=503, headers={"Retry-After": str(int(idle_s))})


def cap_sessions(app: Starlette, per_principal: int, idle_s: float, path: str = "/mcp") -> PrincipalSessions:
    """Put `PrincipalSessions` in front of the endpoint at `path` of the SDK's Streamable HTTP app:
    inside the app's middleware (after the bearer check), where the principal is known."""
    for route in app.router.routes:
        if isinstance(route, Route) and route.path == path:
            capped = PrincipalSessions(route.app, per_principal, idle_s)
            route.app = capped
            return capped
    raise LookupError(f"the app has no route {path}: the sessions there cannot be capped")
