"""A downstream MCP server over stdio whose one tool, `roots`, asks its client for its roots during
the call and answers with what it was given.

ROOTS_ERA="modern" makes it a server of the 2026-07-28 era alone (it refuses the initialize
handshake): it asks with an `input_required` answer and keeps no state between rounds. Otherwise
it speaks the handshake era and sends its client a `roots/list` request of its own.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

MODERN = os.environ.get("ROOTS_ERA") == "modern"
ROOTS = types.Tool(
    name="roots", description="Ask the client for its roots, then name them.", input_schema={"type": "object"}
)


def _named(roots: types.ListRootsResult, era: str) -> types.CallToolResult:
    data: dict[str, Any] = {"roots": [{"uri": str(r.uri), "name": r.name} for r in roots.roots], "era": era}
    return types.CallToolResult(content=[types.TextContent(text=str(data))], structured_content=data)


async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ROOTS])


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    if params.name != "roots":
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
    if ctx.protocol_version != "2026-07-28":
        return _named(
            await ctx.session.send_request(types.ListRootsRequest(), types.ListRootsResult), "handshake"
        )
    given = (params.input_responses or {}).get("roots")
    if isinstance(given, types.ListRootsResult):
        return _named(given, "2026")
    return types.InputRequiredResult(
        input_requests={"roots": types.ListRootsRequest()}, request_state="asked"
    )


async def modern_only(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if ctx.method == "initialize" and MODERN:
        raise MCPError(types.INVALID_REQUEST, "this server speaks only the 2026-07-28 era")
    return await call_next(ctx)


async def main() -> None:
    server: Server[Any] = Server("roots", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware = [modern_only]
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
