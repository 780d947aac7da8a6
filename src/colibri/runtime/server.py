"""The MCP adapter: the SDK's low-level `Server` in front of the chain, served over stdio
(here) or Streamable HTTP (`runtime/http.py`).

The SDK validates `tools/call` params before `on_call_tool`, so non-object `arguments`
would become a bare JSON-RPC error. `_EdgeMiddleware` runs before that validation and
hands such calls to the chain, which answers with its INVALID_PARAMS envelope.

`initialize` and tools/list are answered from the kept declarations (`App.declared`), at once: this
module imports nothing of the chain, the domains or the storage, which phase 2's thread loads
(SPEC §25: cold start ≤ 1.1× a bare SDK server). A call waits for them, bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR

from colibri.core.callers import LOCAL, Caller
from colibri.core.modes import ToolClass
from colibri.runtime import skills_extension
from colibri.runtime.app import App, NotLoaded
from colibri.runtime.duties import duties
from colibri.runtime.gateways import Gateways
from colibri.runtime.handshake import NoSessionMessage
from colibri.runtime.instructions import instructions
from colibri.serving.stdio import run_stdio
from colibri.serving.tracing import sdk_middleware
from colibri.tools.snapshot import Declared

if TYPE_CHECKING:
    from colibri.chain.pipeline import Reply

# Who a request's caller is, given the caller of a request no token proved: over HTTP the proved
# token's (runtime/http_auth.caller_of); on stdio always that anonymous caller, since no token ever
# comes over a pipe, so stdio never imports the token store and the OAuth faces.
Identify = Callable[[ServerRequestContext[Any, Any], Caller], Caller]


def _anonymous(ctx: ServerRequestContext[Any, Any], anonymous: Caller) -> Caller:
    return anonymous


def to_result(reply: Reply) -> types.CallToolResult:
    from colibri.domains.log.api import RECEIPT  # loaded by phase 2 before any reply: a lookup

    receipt = reply.receipt
    return types.CallToolResult(
        # The receipt names the entry of this very answer, whose digest the entry holds: it travels
        # beside the envelope, never in it (SPEC §22).
        meta=None if receipt is None else {RECEIPT: receipt.meta()},
        content=[types.TextContent(text=reply.text)],
        structured_content=reply.envelope,
        is_error=reply.is_error,
    )


def describe(tool: Declared) -> types.Tool:
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=not tool.writes,
            destructive_hint=tool.destructive,
            idempotent_hint=tool.idempotent_effect,
            # Colibri's tools touch only its own database and skill folders, never the outside world.
            open_world_hint=False,
        ),
    )


# Requests answered in phase 1 without waiting: the handshake, discovery, liveness and the list of
# tools, from the kept declarations (SPEC §25). Every other request (calls, skills, resources, ...)
# needs what phase 2 opens and waits for it (SPEC §1.3).
_AT_ONCE_METHODS = frozenset({"initialize", "server/discover", "ping", "tools/list"})


class _EdgeMiddleware:
    """Holds requests back until phase 2 (bounded) and routes non-object arguments to the chain."""

    def __init__(self, app: App, anonymous: Caller, gateways: Gateways, identify: Identify) -> None:
        self._app = app
        self._anonymous = anonymous
        self._gateways = gateways
        self._identify = identify
        # System tools answer at once, even while phase 2 runs (SPEC §1.3).
        self._at_once = frozenset(
            name for name, tool in app.declared.items() if tool.tool_class is ToolClass.SYSTEM
        )

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None or ctx.method in _AT_ONCE_METHODS:
            # Notifications (initialized, cancelled) need nothing phase 2 opens: held, they would only lag.
            return await call_next(ctx)
        if ctx.method != "tools/call":
            await self._app.wait_ready()
            return await call_next(ctx)
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        name = params.get("name")
        # The system tools wait only for the chain (phase 2's imports), never for the database.
        await (self._app.wait_loaded() if name in self._at_once else self._app.wait_ready())
        arguments = params.get("arguments")
        if isinstance(name, str) and arguments is not None and not isinstance(arguments, dict):
            meta = params.get("_meta")
            caller = self._gateways.caller(
                self._identify(ctx, self._anonymous), meta if isinstance(meta, Mapping) else None
            )
            return await answer(self._app, name, arguments, caller)
        return await call_next(ctx)


async def answer(app: App, name: str, arguments: object, caller: Caller) -> types.CallToolResult:
    """The chain's answer to one call, once phase 2 has loaded it; if it has not, within the wait
    or at all, a JSON-RPC error saying why (the boot's failure, or that it is still starting)."""
    try:
        return to_result(await app.call(name, arguments, caller))
    except NotLoaded as exc:
        raise MCPError(INTERNAL_ERROR, str(exc)) from None


def build_server(app: App, anonymous: Caller = LOCAL, identify: Identify = _anonymous) -> Server[Any]:
    """The MCP server in front of `app`; `anonymous` is the caller of a request no token proved
    (on stdio, `local` or COLIBRI_PRINCIPAL's `local:NAME`) and `identify` reads a proved one (over
    HTTP, `http_auth.caller_of`). A call a trusted gateway vouches for is its principal's
    (runtime/gateways.py)."""
    gateways = Gateways(app.config.trusted_gateways)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        caller = identify(ctx, anonymous)
        tools = [describe(tool) for tool in app.admitted() if caller.admits(tool)]
        # By name, always: a client's prompt cache holds only while the list is the same (SPEC §23).
        return types.ListToolsResult(tools=sorted(tools, key=lambda tool: tool.name))

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        caller = gateways.caller(identify(ctx, anonymous), params.meta)
        return await answer(app, params.name, params.arguments, caller)

    mode = app.config.mode
    admitted = [name for name, tool in app.declared.items() if tool.admitted_in(mode)]
    server: Server[Any] = Server(
        "colibri",
        version=app.state.version,
        instructions=instructions(mode, admitted),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    skills_extension.install(server, app)  # the skill registry as skill:// resources (SEP-2640)
    # The SDK's default is its OpenTelemetry span per message: kept only when tracing is on.
    server.middleware = [
        *sdk_middleware(server.middleware),
        NoSessionMessage(),
        _EdgeMiddleware(app, anonymous, gateways, identify),
    ]
    return server


async def serve_stdio(app: App) -> None:
    """Phase 1: transport up at once; phase 2 runs beside it. Returns on stdin EOF."""
    server = build_server(app, Caller(app.config.local_principal))
    options = server.create_initialization_options()
    await run_stdio(
        server,
        options,
        drain=app.drain,
        what="finishing the call in flight, then closing",
        background=duties(app),
        message_limit=app.config.max_message_bytes,
    )
    app.close()
