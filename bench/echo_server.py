"""The baseline: a bare low-level SDK server with one `echo` tool; no chain, no database.

It imports nothing of Colibri (a baseline that loaded Colibri's modules would pay part of what it is
compared with): echo_server_pipes.py serves the same tool on Colibri's event-loop stdio transport
instead of the SDK's, for a like-for-like comparison of what the chain and the database cost.
`--http HOST:PORT` serves it over Streamable HTTP, the direct baseline of the switchboard's HTTP
figures, on the stack `colibri serve --http` runs on (uvicorn's httptools protocol on uvloop, named,
not left to what uvicorn finds installed).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

ECHO = types.Tool(name="echo", description="Echo the arguments back.", input_schema={"type": "object"})


async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=str(params.arguments))], structured_content=params.arguments or {}
    )


def build() -> Server[Any]:
    return Server("echo", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


def serve_http(address: str) -> None:
    import uvicorn

    host, _, port = address.rpartition(":")
    app = build().streamable_http_app(host=host)
    uvicorn.run(app, host=host, port=int(port), log_level="warning", http="httptools", loop="uvloop")


async def main() -> None:
    server = build()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        serve_http(sys.argv[2])
    else:
        anyio.run(main)
