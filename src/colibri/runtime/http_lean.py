"""The lean lane of `colibri serve --http`: one `tools/call` POST on a session past its handshake,
parsed once and sent straight into the chain (SPEC §25: CPU per call is the budget).

The SDK's way for a call is long for what most calls are: the transport validates the message
with pydantic, hands it through a memory stream to the session's loop, whose dispatcher opens a
task and a cancel scope, validates the params twice more (the version's surface, the handler's
model), builds a `CallToolResult` model and validates its dump against the version's surface again
before the answer goes back through another memory stream. `LeanLane` sits behind the bearer check
and the session cap, in front of the SDK's session manager (inside its body limit), and takes a
POST only when every check the SDK would make on it passes, so that the SDK would reach the very
same call: a known session of this token (its owner), past its handshake (the SDK saw
`initialize` and `notifications/initialized` on it), not terminated or expiring, a handshake-era
protocol header or none, Host/Origin/Content-Type as the SDK's transport security wants them, an
Accept naming JSON, one JSON-RPC request `tools/call` with an id and params holding only `name` and
`arguments`, an object (no `_meta`: no progress token, no gateway statement, nothing that may stream), and
phase 2 over. It then calls the chain exactly as the SDK's handler does (`App.call` with the proved
`Caller`: the same envelopes, audit row, log entry and receipt) and answers with the body and
headers the SDK would send. Anything else goes to the SDK untouched, its body replayed. With
tracing on nothing is taken, so every call keeps its SDK span.

A call taken here is counted (`taken`) and logged at debug level. The SDK never sees it, so a
client's `notifications/cancelled` for it finds nothing to cancel (as on the SDK's JSON-answer
path, the call runs to its end either way).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import pydantic_core
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.auth.provider import AccessToken
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.streamable_http import (
    MCP_SESSION_ID_HEADER,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from colibri.core import traces
from colibri.core.callers import Caller
from colibri.runtime.app import App, NotLoaded

if TYPE_CHECKING:
    from colibri.chain.pipeline import Reply

log = logging.getLogger("colibri.http")

_SESSION, _VERSION = MCP_SESSION_ID_HEADER.encode(), b"mcp-protocol-version"
_PARAMS = frozenset({"name", "arguments"})
_REQUEST = frozenset({"jsonrpc", "id", "method", "params"})
_LARGEST_ID = 2**53  # beyond what every JSON peer reads back exactly: left to the SDK
# The headers the SDK's transport judges a POST by (transport security, Accept, Content-Type).
_CHECKED = frozenset({b"host", b"origin", b"content-type", b"accept"})
_KEPT = 256  # at most this many header sets and callers kept


class LeanLane:
    """ASGI app in front of the SDK's session handling (see the module); `watch` is the SDK server
    middleware that tells it which sessions are past their handshake."""

    def __init__(
        self, sdk: ASGIApp, manager: StreamableHTTPSessionManager, app: App, caller_of: CallerOf
    ) -> None:
        self.sdk = sdk
        self._manager = manager
        self._app = app
        self._caller_of = caller_of
        self._security = TransportSecurityMiddleware(manager.security_settings)
        self._ready: set[str] = set()  # sessions whose client sent notifications/initialized
        self._receipt_key: str | None = None
        # Pure functions of what they are keyed by, asked again on every call of a session: kept.
        self._headers_ok: set[tuple[tuple[bytes, bytes], ...]] = set()  # passed the SDK's checks
        self._callers: dict[tuple[str, str, tuple[str, ...]], Caller] = {}  # by Colibri token
        self.taken = 0

    async def watch(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized" and ctx.request_id is None:
            request = ctx.request
            session = request.headers.get(MCP_SESSION_ID_HEADER) if isinstance(request, Request) else None
            # The gate the SDK opens for requests: `initialize` recorded on this very connection.
            if session is not None and ctx.session.client_params is not None:
                self._ready.add(session)
                if len(self._ready) > 2 * len(self._manager._server_instances) + 64:
                    self._ready.intersection_update(self._manager._server_instances)
        return result

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        transport = await self._session_of(scope)
        session = None if transport is None else transport.mcp_session_id
        if transport is None or session is None:
            await self.sdk(scope, receive, send)
            return
        message = await receive()
        call = _call_in(message)
        if call is None:
            await self.sdk(scope, _replay(message, receive), send)
            return
        self.taken += 1
        log.debug("lean lane: tools/call %r", call[1])
        # The session's idle clock stops while a request is in flight, as the SDK's transport does.
        idle, idle_s = transport.idle_scope, transport._idle_timeout
        if idle is not None and idle_s is not None:
            transport._requests_in_flight += 1
            idle.deadline = math.inf
        try:
            body = await self._answer(scope, *call)
        finally:
            if idle is not None and idle_s is not None:
                transport._requests_in_flight -= 1
                if not transport._requests_in_flight:
                    idle.deadline = anyio.current_time() + idle_s
        headers = [
            (b"content-type", b"application/json"),
            (_SESSION, session.encode()),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _session_of(self, scope: Scope) -> StreamableHTTPServerTransport | None:
        """The SDK transport of the session this POST may be served on here, else None."""
        if scope["method"] != "POST" or not self._app.ready.is_set():
            return None
        session = version = None
        checked: list[tuple[bytes, bytes]] = []
        for key, value in scope["headers"]:  # the first of a repeated header, as starlette reads it
            if key == _SESSION:
                session = value.decode("latin-1") if session is None else session
            elif key == _VERSION:
                version = value.decode("latin-1") if version is None else version
            elif key in _CHECKED:
                checked.append((key, value))
        if session is None or session not in self._ready:
            return None
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None  # the 2026 era's own entry decides
        manager = self._manager
        transport = manager._server_instances.get(session)
        if transport is None:
            self._ready.discard(session)
            return None
        user = scope.get("user")
        owner = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
        if owner != manager._session_owners.get(session) or transport.is_terminated:
            return None
        if transport.idle_scope is not None and transport.idle_scope.cancel_called:
            return None
        headers = tuple(checked)
        if headers not in self._headers_ok:
            if not await self._acceptable(Request(scope)):
                return None
            if len(self._headers_ok) < _KEPT:
                self._headers_ok.add(headers)
        return transport

    async def _acceptable(self, request: Request) -> bool:
        """Whether the SDK's transport would take the POST's headers (its `_handle_post_request`)."""
        if await self._security.validate_request(request, is_post=True) is not None:
            return False  # Host, Origin or Content-Type: the SDK refuses it in its own words
        if not check_accept_headers(request)[0]:
            return False
        content_type = request.headers.get("content-type", "").split(";")[0]
        return any(part.strip() == "application/json" for part in content_type.split(","))

    async def _answer(self, scope: Scope, request_id: int | str, name: str, arguments: object) -> bytes:
        """The JSON-RPC answer's bytes, as the SDK's dispatcher and transport would write them."""
        try:
            reply = await self._app.call(name, arguments, self._caller(scope))
        except NotLoaded as exc:  # what server.answer raises for the SDK's handler
            return _error(request_id, MCPError(INTERNAL_ERROR, str(exc)).error)
        except Exception as exc:  # the dispatcher's one exception-to-wire boundary, mirrored
            error = handler_exception_to_error_data(exc)
            if error is None:
                log.exception("handler for 'tools/call' raised")
                error = ErrorData(code=0, message=str(exc))
            return _error(request_id, error)
        return pydantic_core.to_json({"jsonrpc": "2.0", "id": request_id, "result": self._result(reply)})

    def _caller(self, scope: Scope) -> Caller:
        """`caller_of(scope)`, kept for a Colibri token: its Caller is its name, digest and scopes.
        (The token is still proved on every request; an identity provider's is read every time.)"""
        user = scope.get("user")
        access = user.access_token if isinstance(user, AuthenticatedUser) else None
        if access is None or type(access) is not AccessToken:
            return self._caller_of(scope)
        key = (access.token, access.client_id, tuple(access.scopes))
        caller = self._callers.get(key)
        if caller is None:
            if len(self._callers) >= _KEPT:
                self._callers.clear()
            caller = self._callers[key] = self._caller_of(scope)
        return caller

    def _result(self, reply: Reply) -> dict[str, Any]:
        """`server.to_result(reply)` as the SDK dumps it for a handshake-era session: by alias, no
        None fields, in the surface's order (tests/http/test_lean_lane.py holds the two equal)."""
        result: dict[str, Any] = {}
        if reply.receipt is not None:
            if self._receipt_key is None:
                from colibri.domains.log.api import RECEIPT  # loaded by phase 2 before any reply

                self._receipt_key = RECEIPT
            result["_meta"] = {self._receipt_key: reply.receipt.meta()}
        result["content"] = [{"text": reply.text, "type": "text"}]
        result["isError"] = reply.is_error
        if reply.envelope is not None:
            result["structuredContent"] = reply.envelope
        return result


CallerOf = Callable[[Scope], Caller]


def _call_in(message: Message) -> tuple[int | str, str, object] | None:
    """(id, tool name, arguments) of a whole body holding one plain tools/call request, else None."""
    if message["type"] != "http.request" or message.get("more_body", False):
        return None
    body = message.get("body", b"")
    if b'"tools/call"' not in body:
        return None
    try:
        raw = pydantic_core.from_json(body)
    except ValueError:
        return None  # the SDK answers the parse error
    if type(raw) is not dict or raw.keys() != _REQUEST or raw["jsonrpc"] != "2.0":
        return None
    request_id, params = raw["id"], raw["params"]
    if raw["method"] != "tools/call" or type(params) is not dict or not params.keys() <= _PARAMS:
        return None
    if not (type(request_id) is str or (type(request_id) is int and abs(request_id) < _LARGEST_ID)):
        return None
    name, arguments = params.get("name"), params.get("arguments", _ABSENT)
    if type(name) is not str or not (arguments is _ABSENT or type(arguments) is dict):
        # An explicit null is the SDK's to judge; arguments that are no object, server.py's edge
        # middleware answers (in the SDK's raw dump of a result, not its surface's).
        return None
    return request_id, name, None if arguments is _ABSENT else arguments


_ABSENT: Any = object()


def _error(request_id: int | str, error: ErrorData) -> bytes:
    return (
        JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        .model_dump_json(by_alias=True, exclude_unset=True)
        .encode()
    )


def _replay(first: Message, receive: Receive) -> Receive:
    """`receive` with `first`, already read, given back first."""
    pending = [first]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


def install(manager: StreamableHTTPSessionManager, app: App, caller_of: CallerOf) -> LeanLane | None:
    """Put a `LeanLane` inside the manager's body limit, in front of its session handling; None
    (nothing put) while tracing is on. The caller adds `lane.watch` to the SDK server's middleware."""
    if traces.enabled():
        return None
    limit = manager.asgi_app
    if not isinstance(limit, RequestBodyLimitMiddleware):
        raise TypeError(f"the SDK's session manager changed shape ({type(limit).__name__}): no lean lane")
    lane = LeanLane(limit.app, manager, app, caller_of)
    limit.app = lane
    return lane
