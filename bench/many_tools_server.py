"""A stdio MCP server with N generated tools (`python many_tools_server.py N`), for `bench tools`:
an index of 1,000 tools for find_tools. Each tool is a verb and an object of an area, described in
a sentence, with two arguments; calls answer their own name."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

VERBS = ("create", "get", "list", "update", "delete", "archive", "export", "import", "search", "sync")
AREAS = (
    "billing",
    "crm",
    "hr",
    "support",
    "inventory",
    "shipping",
    "analytics",
    "marketing",
    "legal",
    "devops",
)
OBJECTS = (
    "invoice",
    "customer",
    "employee",
    "ticket",
    "product",
    "order",
    "report",
    "campaign",
    "contract",
    "deploy",
)


def tools(count: int) -> list[types.Tool]:
    made = []
    for n, (area, verb, thing) in enumerate(itertools.cycle(itertools.product(AREAS, VERBS, OBJECTS))):
        if n == count:
            break
        suffix = "" if n < 1000 else f"_{n // 1000}"
        made.append(
            types.Tool(
                name=f"{area}_{verb}_{thing}{suffix}",
                description=f"{verb.capitalize()} a {thing} in the {area} system and return it as JSON.",
                input_schema={
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": f"the {thing}'s id"},
                        "fields": {"type": "object", "description": f"the {thing}'s fields to use"},
                    },
                },
            )
        )
    return made


def main() -> None:
    listed = tools(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=params.name)])

    async def serve() -> None:
        server: Server[Any] = Server("many", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
