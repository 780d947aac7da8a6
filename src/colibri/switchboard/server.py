"""The MCP face of the switchboard: the SDK's low-level `Server`, over stdio or Streamable HTTP.

tools/list_changed reaches handshake-era clients as a notification on their connection and
2026-era clients through `subscriptions/listen` (the SDK's listen handler and subscription bus).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette

from colibri import __version__
from colibri.serving.http import run_http, security_for, web_server
from colibri.serving.signals import DRAIN_GRACE_S
from colibri.serving.stdio import run_stdio
from colibri.switchboard import envelopes, metrics, reload
from colibri.switchboard.errors import HANDLER_ERROR, INVALID_PARAMS
from colibri.switchboard.faces import auth_for, status_page
from colibri.switchboard.gateway import Switchboard
from colibri.switchboard.lean import ClientLane
from colibri.switchboard.listening import listen_handler, publishing
from colibri.switchboard.peers import CHANGED, Peers, SessionCaller
from colibri.switchboard.serving import Serving

log = logging.getLogger("colibri.switchboard")

SERVER_NAME = "colibri-switchboard"


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
            return await board.call(params.name, params.arguments, SessionCaller(ctx.session, ctx.request_id))
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

    async def tools_changed() -> None:
        await bus.publish(ToolsListChanged())

    async def lists_changed(kind: str) -> None:
        if kind == "resources":
            await bus.publish(ResourcesListChanged())
        elif kind == "prompts":
            await bus.publish(PromptsListChanged())
        await peers.notify(CHANGED[kind])

    passthrough = board.passthrough

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=passthrough.resources())

    async def list_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=passthrough.templates())

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await passthrough.read(params.uri)

    async def subscribe(
        ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        passthrough.owner(params.uri)
        if peers.subscribe(ctx, params.uri):
            try:
                await passthrough.subscribe(params.uri)
            except MCPError:
                peers.unsubscribe(ctx, params.uri)
                raise
        return types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        if peers.unsubscribe(ctx, params.uri):
            await passthrough.unsubscribe(params.uri)
        return types.EmptyResult()

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=passthrough.prompts())

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await passthrough.get_prompt(params.name, params.arguments)

    async def complete(
        ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        return await passthrough.complete(params)

    async def set_level(
        ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        await passthrough.set_level(params.level)
        return types.EmptyResult()

    server: Server[Any] = _Gateway(
        SERVER_NAME,
        version=__version__,
        instructions=(
            "A health-aware gateway: each downstream server's tools are listed as server.tool while "
            "that server is healthy; switchboard_status explains what is missing and why."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=listen_handler(bus, peers, passthrough),
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    # Registered by hand: the constructor argument warns that logging is deprecated in the 2026 era,
    # but handshake-era clients still set the level of the servers behind the switchboard.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    # Replaces the SDK default (an OpenTelemetry span per message, a no-op without an exporter).
    server.middleware = [remember_peer, _refuse_non_object_arguments]
    board.on_tools_changed(tools_changed)
    board.on_lists_changed(lists_changed)
    board.notified = publishing(bus, peers.downstream_notified)
    board.default_caller = peers.latest
    return server


async def _refuse_non_object_arguments(
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
            notification_options
            or NotificationOptions(tools_changed=True, resources_changed=True, prompts_changed=True),
            experimental_capabilities,
            extensions,
        )


async def serve_stdio(board: Switchboard, serving: Serving | None = None) -> None:
    """Serve on stdin/stdout until stdin closes or a signal arrives."""
    serving = serving or Serving(config_path="")
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
        if serving.config_path:
            tasks.start_soon(reload.watch, board, serving.config_path, serving.watch)
        if serving.metrics is not None:
            host, port = serving.metrics
            probes = web_server(Starlette(routes=metrics.routes(board)), host, port, serving.http_limits)
            tasks.start_soon(probes.serve)
            log.info("probes and metrics at http://%s:%d/metrics", host, port)
        # Requests read before stdin's end are answered first; none can take longer than this.
        answer_within_s = board.config.startup_wait_s + max(
            (spec.health.call_timeout_s for spec in board.config.servers), default=0.0
        )
        lane = ClientLane(
            board, {"name": SERVER_NAME, "version": __version__}, answer_within_s + DRAIN_GRACE_S
        )
        async with lane.running():
            await run_stdio(
                server,
                options,
                drain=drain,
                what="stopping the downstreams",
                message_limit=serving.message_limit,
                answer_within_s=answer_within_s + DRAIN_GRACE_S,
                divert=lane,
            )
        log.info("stdin closed; stopping the downstreams")
        tasks.cancel_scope.cancel()


async def serve_http(board: Switchboard, options: Serving) -> None:
    """Serve Streamable HTTP at http://HOST:PORT/mcp (and the probes) until SIGINT or SIGTERM."""
    assert options.http is not None
    host, port = options.http
    limits = options.http_limits
    server = build_server(board)
    app = server.streamable_http_app(
        host=host,
        transport_security=security_for(host),
        session_idle_timeout=limits.session_idle_s,
        max_sessions=limits.max_sessions,
        custom_starlette_routes=[*metrics.routes(board), *status_page(board, options)],
        **auth_for(options, host, port),
    )
    async with anyio.create_task_group() as tasks:
        await tasks.start(board.run)
        if options.config_path:
            tasks.start_soon(reload.watch, board, options.config_path, options.watch)
        log.info("switchboard %s serving Streamable HTTP at http://%s:%d/mcp", __version__, host, port)
        await run_http(app, host, port, limits)
        log.info("HTTP server stopped; stopping the downstreams")
        tasks.cancel_scope.cancel()
