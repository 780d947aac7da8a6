"""A downstream MCP server that writes down the `_meta` keys of every tools/call it receives, for the
tests of what a downstream is told about the caller (SPEC §20).

Environment: META_NAME, the name it gives itself in `initialize` (`colibri` passes for a Colibri);
META_LOG, the file that gets one JSON line per call: the sorted `_meta` keys it came with.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOL = types.Tool(name="echo", description="Answer ok.", input_schema={"type": "object"})


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    with open(os.environ["META_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(sorted(params.meta or {})) + "\n")
    return types.CallToolResult(content=[types.TextContent(text="ok")])


async def main() -> None:
    server: Server[Any] = Server(
        os.environ.get("META_NAME", "meta"), version="1.0", on_list_tools=list_tools, on_call_tool=call_tool
    )
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
