"""The MCP adapter: the SDK's low-level `Server` in front of the chain, served over stdio.

The SDK validates `tools/call` params before `on_call_tool`, so non-object `arguments`
would become a bare JSON-RPC error. `_EdgeMiddleware` runs before that validation and
hands such calls to the chain, which answers with its INVALID_PARAMS envelope.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server

from colibri.chain.pipeline import Reply
from colibri.pipes import stdio_streams
from colibri.runtime.app import App
from colibri.runtime.checkpoints import checkpoint_every
from colibri.runtime.modes import TOOL_CLASSES, ToolClass
from colibri.tools.spec import Tool

log = logging.getLogger("colibri")

_ANSWER_AT_ONCE = frozenset(name for name, cls in TOOL_CLASSES.items() if cls is ToolClass.SYSTEM)


def to_result(reply: Reply) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=reply.text)],
        structured_content=reply.envelope,
        is_error=reply.is_error,
    )


def describe(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=types.ToolAnnotations(read_only_hint=not tool.writes),
    )


class _EdgeMiddleware:
    """Holds requests back until phase 2 (bounded) and routes non-object arguments to the chain."""

    def __init__(self, app: App) -> None:
        self._app = app

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call":
            params = ctx.params if isinstance(ctx.params, Mapping) else {}
            name = params.get("name")
            if name not in _ANSWER_AT_ONCE:
                await self._app.wait_ready()
            arguments = params.get("arguments")
            if isinstance(name, str) and arguments is not None and not isinstance(arguments, dict):
                return to_result(await self._app.call(name, arguments))
        elif ctx.method == "tools/list":
            await self._app.wait_ready()
        return await call_next(ctx)


def build_server(app: App) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[describe(tool) for tool in app.admitted()])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return to_result(await app.call(params.name, params.arguments))

    server: Server[Any] = Server(
        "colibri", version=app.state.version, on_list_tools=list_tools, on_call_tool=call_tool
    )
    # Replaces the SDK default (an OpenTelemetry span per message, a no-op without an exporter).
    server.middleware = [_EdgeMiddleware(app)]
    return server


async def serve_stdio(app: App) -> None:
    """Phase 1: transport up at once; phase 2 runs beside it. Returns on stdin EOF."""
    server = build_server(app)
    async with stdio_streams() as (read_stream, write_stream), anyio.create_task_group() as tasks:
        tasks.start_soon(app.boot)
        tasks.start_soon(checkpoint_every, app)
        tasks.start_soon(_stop_on_signal, app)
        await server.run(read_stream, write_stream, server.create_initialization_options())
        tasks.cancel_scope.cancel()
    app.close()


async def _stop_on_signal(app: App) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("received %s: finishing the call in flight, then closing", signal.Signals(signum).name)
            async with app.chain.lock:
                app.close()
                # Give the transport a moment to write the last response out.
                await anyio.sleep(0.05)
            sys.stderr.flush()
            # Where stdin is not a pipe the SDK's reader sits in a thread blocked on read() that
            # cannot be cancelled, so leave without joining it. Everything we own is closed.
            os._exit(0)
