"""The lean lane of the HTTP face: a POST of one routed tools/call answered beside the SDK (SPEC §25).

Through the SDK a call's POST was parsed and validated twice, dispatched through its session's
streams and middleware, and answered through an event-stream response rebuilt as JSON
(json_answers.py). This lane sits in front of the SDK's Streamable HTTP endpoint, behind the
bearer-token check and the per-principal session cap, and takes a POST only when everything the
SDK would check holds: the session (its `Mcp-Session-Id`) is open, past its handshake (its
`notifications/initialized` was accepted) and owned by the credential of this request; the
protocol-version header is absent or a handshake-era version; Accept names JSON and event streams;
the Content-Type is JSON; the Host and Origin headers pass the transport's DNS-rebinding check; the
body is within the SDK's limit and is ONE request, `tools/call` of a routed tool with object
arguments. Everything else — handshakes, lists, notifications, batches, responses, malformed input,
2026-era requests, resources, prompts, `switchboard_status`, `call_tool` — goes to the SDK as it is.

A call taken here takes the same `Route` as every call (driving.py: admission, policy, limits,
pins, approvals, verdicts, fallback, the audit row, the same envelopes) for the token's principal.
Its answer goes back on its own POST only (outbox.py): one JSON body, or an event stream when
progress or a log message must reach the client first. A downstream's own request in the course
of the call (sampling, elicitation, roots) goes to the call's own session through the SDK, on that
session's stream, never to another. The client's `notifications/cancelled` for a call taken here
cancels it; the session is kept from its idle timeout while the call is in flight.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.streamable_http import StreamableHTTPServerTransport, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from colibri.serving.oauth import OAuthAccess
from colibri.switchboard.base import spans
from colibri.switchboard.faces.driving import Driver
from colibri.switchboard.faces.lean_caller import LeanCall, LeanCaller, valid_id
from colibri.switchboard.faces.lean_wire import answer_body
from colibri.switchboard.faces.mcp_server import Gateway, identity_of_scope
from colibri.switchboard.faces.outbox import SETTLE_TURNS, Outbox
from colibri.switchboard.faces.post_http import disconnected, header, held_open, message_of, replayed
from colibri.switchboard.routing import Answer, Switchboard

_CALL, _CANCELLED, _INITIALIZED = (
    b'"tools/call"',
    b'"notifications/cancelled"',
    b'"notifications/initialized"',
)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")  # the SDK answers a lone one with an error: it stays there
_PROTOCOL_META = "io.modelcontextprotocol/protocolVersion"


@dataclass(slots=True)
class PostCall(LeanCall):
    """A tools/call taken off one POST: its session and where its messages go."""

    session: str = ""
    outbox: Outbox = field(default_factory=Outbox)


class PostLane(Driver[PostCall]):
    """ASGI app in front of the SDK's endpoint (the `app` it wraps): see the module."""

    def __init__(
        self, app: StreamableHTTPASGIApp, board: Switchboard, server: Gateway, taken: Callable[[], None]
    ) -> None:
        self.app = app
        self._taken = taken  # counts each call taken (Metrics.lean_calls)
        self._board = board
        self._server = server
        self._manager: StreamableHTTPSessionManager = app.session_manager
        self._security = TransportSecurityMiddleware(self._manager.security_settings)
        self._ready: set[str] = set()  # sessions whose notifications/initialized was accepted
        self._calls: dict[tuple[str, object], PostCall] = {}
        # A call of a server that exchanges the caller's token reads it from the SDK's middleware
        # (mcp_server._subject_handed_on): such callers' calls stay with the SDK.
        self._exchanging = any(spec.exchange is not None for spec in board.config.servers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = header(scope, b"mcp-session-id")
        if scope["type"] != "http" or scope["method"] != "POST" or session_id is None:
            await self.app(scope, receive, send)
            return
        body, replay = await self._body(scope, receive)
        if body is not None and _CALL in body:
            taken = await self._call(scope, session_id, body, receive, send)
        elif body is not None and _CANCELLED in body:
            taken = await self._cancelled(scope, session_id, body, send)
        else:
            taken = False
        if taken:
            return
        if body is not None and _INITIALIZED in body:
            send = self._noting_initialized(session_id, send)
        await self.app(scope, replay, send)

    async def _body(self, scope: Scope, receive: Receive) -> tuple[bytes | None, Receive]:
        """The whole body when it is within the SDK's limit, and a `receive` that gives it again."""
        length = header(scope, b"content-length")
        if length is None or not length.isdigit() or int(length) > self._manager.max_request_body_size:
            return None, receive
        chunks: list[bytes] = []
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return None, replayed(messages, receive)
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        return body, replayed([{"type": "http.request", "body": body, "more_body": False}], receive)

    def _session(self, scope: Scope, session_id: str) -> StreamableHTTPServerTransport | None:
        """The session's transport when this request may use it as the SDK would let it, else None."""
        transport = self._manager._server_instances.get(session_id)
        if transport is None:
            self._ready.discard(session_id)
            return None
        user = scope.get("user")
        requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
        if requestor != self._manager._session_owners.get(session_id):
            return None  # another credential's session: the SDK answers 404
        idle = transport.idle_scope
        if transport.is_terminated or (idle is not None and idle.cancel_called):
            return None
        version = header(scope, b"mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None
        return transport

    async def _admitted(self, scope: Scope) -> bool:
        """Accept, Content-Type and the DNS-rebinding check, as the SDK's transport checks a POST."""
        request = Request(scope)
        has_json, has_sse = check_accept_headers(request)
        content_type = request.headers.get("content-type", "").split(";")[0].split(",")
        if not (has_json and has_sse) or "application/json" not in (part.strip() for part in content_type):
            return False
        refused: Response | None = await self._security.validate_request(request, is_post=True)
        return refused is None

    async def _call(self, scope: Scope, session_id: str, body: bytes, receive: Receive, send: Send) -> bool:
        if session_id not in self._ready or self._manager.json_response or _SURROGATE.search(body):
            return False
        transport = self._session(scope, session_id)
        message = message_of(body)
        if transport is None or message is None or message.get("method") != "tools/call":
            return False
        request_id, params = message.get("id"), message.get("params")
        if (
            not valid_id(request_id)
            or not isinstance(params, dict)
            or (session_id, request_id) in self._calls
        ):
            return False
        name, arguments, meta = params.get("name"), params.get("arguments"), params.get("_meta")
        if meta is None:
            meta = {}
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if (
            not isinstance(meta, dict)  # the SDK refuses these with -32602: left to it
            or not (token is None or valid_id(token))
            or not isinstance(name, str)
            or not (arguments is None or isinstance(arguments, dict))
            or _PROTOCOL_META in meta
            or "requestState" in params
            or "inputResponses" in params
            or not self._board.router.leanable(name)
            or (
                self._exchanging and isinstance(getattr(scope.get("user"), "access_token", None), OAuthAccess)
            )
            or not await self._admitted(scope)
        ):
            return False
        call = PostCall(request_id, name, arguments, token, False, params, session=session_id)
        call.who = identity_of_scope(scope)
        call.span = spans.serving(name, meta, header(scope, b"mcp-protocol-version"))
        self._calls[session_id, request_id] = call
        self._server.peers.touch(session_id)  # as the SDK's path remembers who spoke last
        self._taken()
        # A POST that ends before its answer (the client gone, the server stopping) does not cancel
        # its call, as on the SDK's path: only the client's notifications/cancelled does.
        with held_open(transport):
            with spans.current(call.span):
                self._start(call)
            watching: asyncio.Future[Message] = asyncio.ensure_future(receive())  # only a disconnect comes
            watching.add_done_callback(partial(disconnected, call.outbox))
            try:
                await call.outbox.deliver(send, session_id)
            finally:
                watching.cancel()
        return True

    async def _cancelled(self, scope: Scope, session_id: str, body: bytes, send: Send) -> bool:
        """The client's `notifications/cancelled` for a call of its own session taken here."""
        message = message_of(body)
        params = None if message is None or "id" in message else message.get("params")
        if (
            message is None
            or message.get("method") != "notifications/cancelled"
            or not isinstance(params, dict)
        ):
            return False
        call = self._calls.get((session_id, params.get("requestId")))
        if call is None or self._session(scope, session_id) is None or not await self._admitted(scope):
            return False
        self._cancel(call, "the client cancelled the call")
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return True

    def stop(self) -> None:
        """The face stops: the calls still running are cancelled, as the SDK's session manager
        cancels the calls it serves when it stops."""
        for call in list(self._calls.values()):
            self._give_up(call, "the switchboard is stopping")

    def _cancel(self, call: PostCall, reason: str) -> None:
        if call.cancelled or self._calls.get((call.session, call.request_id)) is not call:
            return
        call.cancelled = True  # the call is never answered, as JSON-RPC cancellation has it
        call.outbox.close()
        self._give_up(call, reason)

    def _give_up(self, call: PostCall, reason: str) -> None:
        if call.task is not None:
            call.task.cancel()
        elif call.abandon is not None:
            call.abandon(reason)
            self._forget(call)
            if call.route is not None:
                call.route.cancelled()

    def _noting_initialized(self, session_id: str, send: Send) -> Send:
        """`send`, noting the session ready for this lane once the SDK accepted its initialized."""

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 202:
                self._ready.add(session_id)
                if len(self._ready) > 2 * (self._manager.max_sessions or 1024):
                    self._ready &= set(self._manager._server_instances)
            await send(message)

        return noting

    def _caller(self, call: PostCall) -> LeanCaller:
        if call.caller is None:
            session = call.session
            call.caller = LeanCaller(
                call.outbox.put, lambda: self._server.peers.caller_of(session), call.token
            )
        return call.caller

    def _forget(self, call: PostCall, error: str | None = None) -> None:
        spans.end(call.span, error)
        call.span = None
        self._calls.pop((call.session, call.request_id), None)

    def _finish(self, call: PostCall, answer: Answer) -> None:
        self._forget(call, None if answer.error is None else str(answer.error.code))
        if not call.cancelled:
            body = {"jsonrpc": "2.0", "id": call.request_id} | answer_body(answer, None)
            server = answer.tried[-1].server if answer.tried else None
            stdio = server in self._board.downstreams and self._board.downstreams[server].spec.url is None
            call.outbox.answer(body, SETTLE_TURNS if stdio else 0)


def lane_in_front(
    app: Starlette, board: Switchboard, server: Gateway, taken: Callable[[], None], path: str = "/mcp"
) -> PostLane:
    """Put a `PostLane` right in front of the SDK's endpoint at `path` of the Streamable HTTP app,
    behind whatever wraps it there (the bearer check, the per-principal session cap)."""
    for route in app.router.routes:
        if getattr(route, "path", None) != path:
            continue
        holder: Any = route
        while not isinstance(holder.app, StreamableHTTPASGIApp):
            holder = holder.app
        lane = PostLane(holder.app, board, server, taken)
        holder.app = lane
        return lane
    raise LookupError(f"the app has no route {path}: no lean lane can stand in front of it")
