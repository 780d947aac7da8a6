"""The MCP face of the switchboard: the SDK's low-level `Server`, over stdio or Streamable HTTP.

tools/list_changed reaches handshake-era clients as a notification on their connection and
2026-era clients through `subscriptions/listen` (the SDK's listen handler and subscription bus).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from colibri import __version__
from colibri.pipes import LINE_LIMIT
from colibri.serving.http import run_http, security_for
from colibri.serving.http_limits import HttpLimits
from colibri.serving.signals import DRAIN_GRACE_S
from colibri.serving.stdio import run_stdio
from colibri.switchboard import envelopes
from colibri.switchboard.errors import HANDLER_ERROR, INVALID_PARAMS
from colibri.switchboard.gateway import Switchboard

log = logging.getLogger("colibri.switchboard")

SERVER_NAME = "colibri-switchboard"


class Peers:
    """Handshake-era connections seen so far, the ones tools/list_changed is sent to (bounded)."""

    LIMIT = 256

    def __init__(self) -> None:
        self._sessions: OrderedDict[str, ServerSession] = OrderedDict()

    def remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.method == "initialize":
            return
        headers = getattr(ctx.request, "headers", None)
        key = str(headers.get("mcp-session-id")) if headers is not None else "stdio"
        self._sessions[key] = ctx.session
        self._sessions.move_to_end(key)
        while len(self._sessions) > self.LIMIT:
            self._sessions.popitem(last=False)

    async def notify(self) -> None:
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._sessions.pop(key, None)


def build_server(board: Switchboard) -> Server[Any]:
    """The low-level server whose tools are the switchboard's."""
    bus = InMemorySubscriptionBus()
    peers = Peers()

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await board.started()
        return types.ListToolsResult(tools=board.tools())

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            return await board.call(params.name, params.arguments)
        except MCPError:
            raise
        except Exception as exc:
            log.exception("switchboard failed routing %s", params.name)
            return envelopes.error(
                HANDLER_ERROR,
                f"the switchboard failed: {exc}",
                schemas=board.router.schemas_for(params.name),
                tool=params.name,
            )

    async def remember_peer(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        peers.remember(ctx)
        return await call_next(ctx)

    async def refuse_non_object_arguments(
        ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        # The SDK would answer a bare -32602 before `call_tool` runs; a tool's caller gets an envelope.
        params = ctx.params if ctx.method == "tools/call" and isinstance(ctx.params, Mapping) else {}
        arguments, name = params.get("arguments"), params.get("name")
        if isinstance(name, str) and arguments is not None and not isinstance(arguments, dict):
            return envelopes.error(
                INVALID_PARAMS,
                f"arguments for {name} must be a JSON object, got {type(arguments).__name__}; "
                'pass named arguments, e.g. {"key": "value"}, or {} for none',
                tool=name,
                issues=[{"path": "", "message": "expected an object", "type": "object_type"}],
            )
        return await call_next(ctx)

    async def tools_changed() -> None:
        await bus.publish(ToolsListChanged())
        await peers.notify()

    server: Server[Any] = _Gateway(
        SERVER_NAME,
        version=__version__,
        instructions=(
            "A health-aware gateway: each downstream server's tools are listed as server.tool while "
            "that server is healthy; switchboard_status explains what is missing and why."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(bus),
    )
    # Replaces the SDK default (an OpenTelemetry span per message, a no-op without an exporter).
    server.middleware = [remember_peer, refuse_non_object_arguments]
    board.on_tools_changed(tools_changed)
    return server


class _Gateway(Server[Any]):
    """The SDK server, advertising `tools.listChanged` whichever transport asks.

    The Streamable HTTP session manager builds the initialize answer from the defaults of
    `create_initialization_options`, so the default itself must announce list changes.
    """

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


async def serve_stdio(board: Switchboard, limit: int = LINE_LIMIT) -> None:
    """Serve on stdin/stdout until stdin closes or a signal arrives; `limit` caps one message."""
    server = build_server(board)
    options = server.create_initialization_options()
    board_scope = anyio.CancelScope()
    board_done = anyio.Event()

    async def run_board(*, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with board_scope:
            await board.run(task_status=task_status)
        board_done.set()

    async def drain() -> None:
        board_scope.cancel()
        await board_done.wait()

    async with anyio.create_task_group() as tasks:
        await tasks.start(run_board)
        # Requests read before stdin's end are answered first; none can take longer than this.
        answer_within_s = board.config.startup_wait_s + max(
            (spec.health.call_timeout_s for spec in board.config.servers), default=0.0
        )
        await run_stdio(
            server,
            options,
            drain=drain,
            what="stopping the downstreams",
            message_limit=limit,
            answer_within_s=answer_within_s + DRAIN_GRACE_S,
        )
        log.info("stdin closed; stopping the downstreams")
        tasks.cancel_scope.cancel()


async def serve_http(board: Switchboard, host: str, port: int, limits: HttpLimits | None = None) -> None:
    """Serve Streamable HTTP at http://HOST:PORT/mcp until SIGINT or SIGTERM."""
    limits = limits or HttpLimits()
    server = build_server(board)
    app = server.streamable_http_app(
        host=host,
        transport_security=security_for(host),
        session_idle_timeout=limits.session_idle_s,
        max_sessions=limits.max_sessions,
    )
    async with anyio.create_task_group() as tasks:
        await tasks.start(board.run)
        log.info("switchboard %s serving Streamable HTTP at http://%s:%d/mcp", __version__, host, port)
        await run_http(app, host, port, limits)
        log.info("HTTP server stopped; stopping the downstreams")
        tasks.cancel_scope.cancel()
