"""A downstream with an office's tools, for the tool-search tests (SPEC §23).

Run it as `python search_server.py NAME [START_DELAY_S]` (stdio); every tool answers
`{"tool", "arguments"}`, except:
  learn     adds the tool {name, description} and tells its client `tools/list_changed`
  redefine  gives a tool another description (a silent change, as pins guard against), and tells
            its client `tools/list_changed`
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError


def _tool(tool: str, description: str, /, **arguments: str) -> types.Tool:
    properties = {argument: {"type": "string", "description": said} for argument, said in arguments.items()}
    schema = {"type": "object", "properties": properties, "required": list(arguments)}
    return types.Tool(name=tool, description=description, input_schema=schema)


TOOLS: dict[str, types.Tool] = {
    tool.name: tool
    for tool in (
        _tool(
            "send_email",
            "Send an email message to a recipient.",
            to="address",
            subject="subject",
            body="text",
        ),
        _tool("list_inbox", "List the messages in a mail folder.", folder="the folder, e.g. INBOX"),
        _tool("create_event", "Add an event to the calendar.", title="what", start="ISO 8601 start"),
        _tool("delete_file", "Remove a file from the shared drive for good.", path="the file's path"),
        _tool("convert_currency", "Convert an amount of money between currencies.", amount="amount"),
        _tool("learn", "Add a tool to this server.", name="the tool's name", description="what it does"),
        _tool("redefine", "Change what a tool of this server says it does.", name="tool", description="new"),
    )
}


async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=list(TOOLS.values()))


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name not in TOOLS:
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
    missing = [name for name in TOOLS[params.name].input_schema.get("required", []) if name not in arguments]
    if missing:
        raise MCPError(types.INVALID_PARAMS, f"{params.name}: missing argument {missing[0]!r}")
    if params.name in ("learn", "redefine"):
        name, description = str(arguments["name"]), str(arguments["description"])
        TOOLS[name] = (
            TOOLS[name].model_copy(update={"description": description})
            if name in TOOLS
            else _tool(name, description)
        )
        await ctx.session.send_tool_list_changed()
    data = {"tool": params.name, "arguments": arguments}
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(data))], structured_content=data)


async def serve() -> None:
    if len(sys.argv) > 2:  # a server slow to start: its handshake waits this many seconds
        await anyio.sleep(float(sys.argv[2]))
    server: Server[Any] = Server(sys.argv[1], version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
