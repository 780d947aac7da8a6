"""A downstream MCP server (handshake era) that talks to its client as much as it can, for the
tests of SPEC §21: each session hears only its own calls.

Run it as `python hostile_server.py` (stdio) or `python hostile_server.py --http HOST:PORT`.

Tools:
  work {secret, hold_s, ask}  during the call: a log line tied to the request ("log SECRET"), one
                 sent on the connection's own channel as if unrelated ("stray SECRET"), a progress
                 notification ("progress SECRET") when the call has a progress token, then, when
                 `ask`, an elicitation, a sampling request and a roots request tied to the request
                 (each naming SECRET); it waits `hold_s` and answers what it was told (or the error)
  push {delay_s}  answers at once; `delay_s` later, outside any call, sends a log line, a sampling
                 request and an elicitation on the connection's own channel, and appends what came
                 back to the file HOSTILE_RECORD (one JSON line per request)
  who            its pid, HOSTILE_WHO and HOSTILE_KEY (set per principal by an isolated server's env
                 and envFile)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata

OBJECT = {"type": "object"}
TOOLS = [
    types.Tool(name="work", description="Talk to the client during the call.", input_schema=OBJECT),
    types.Tool(name="push", description="Talk to the client later, outside any call.", input_schema=OBJECT),
    types.Tool(name="who", description="Which process answers.", input_schema=OBJECT),
]
WHO: dict[str, Any] = {"type": "object", "properties": {"who": {"type": "string"}}}
_background: set[asyncio.Task[None]] = set()


def _answer(data: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(data))], structured_content=data)


async def _asked(
    session: ServerSession, request: types.ServerRequest, kind: type[types.Result], related: Any
) -> Any:
    metadata = None if related is None else ServerMessageMetadata(related_request_id=related)
    try:
        result = await session.send_request(request, kind, request_read_timeout_seconds=20, metadata=metadata)
    except MCPError as exc:
        return {"error": exc.error.message}
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def _log(text: str) -> types.LoggingMessageNotification:
    return types.LoggingMessageNotification(
        params=types.LoggingMessageNotificationParams(level="info", data=text)
    )


async def work(
    ctx: ServerRequestContext[Any, Any], arguments: dict[str, Any], meta: types.RequestParamsMeta | None
) -> types.CallToolResult:
    secret = str(arguments.get("secret", ""))
    session, related = ctx.session, ctx.request_id
    await session.send_notification(_log(f"log {secret}"), related_request_id=related)
    await session.send_notification(_log(f"stray {secret}"))
    token = (meta or {}).get("progress_token")
    if token is not None:
        progress = types.ProgressNotificationParams(
            progress_token=token, progress=1, message=f"progress {secret}"
        )
        await session.send_notification(
            types.ProgressNotification(params=progress), related_request_id=related
        )
    told: dict[str, Any] = {"secret": secret, "pid": os.getpid()}
    if arguments.get("ask"):
        elicit = types.ElicitRequestFormParams(
            message=f"elicit {secret}",
            requested_schema={"type": "object", "properties": {"who": {"type": "string"}}},
        )
        told["elicited"] = await _asked(
            session, types.ElicitRequest(params=elicit), types.ElicitResult, related
        )
        sample = types.CreateMessageRequestParams(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(text=f"sample {secret}"))],
            max_tokens=5,
        )
        told["sampled"] = await _asked(
            session, types.CreateMessageRequest(params=sample), types.CreateMessageResult, related
        )
        told["roots"] = await _asked(session, types.ListRootsRequest(), types.ListRootsResult, related)
    await anyio.sleep(float(arguments.get("hold_s", 0)))
    return _answer(told)


async def push_later(session: ServerSession, delay_s: float) -> None:
    await anyio.sleep(delay_s)
    await session.send_notification(_log("unasked log"))
    sample = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(text="unasked sample"))],
        max_tokens=5,
    )
    elicit = types.ElicitRequestFormParams(message="unasked elicit", requested_schema=WHO)
    outcomes = [
        await _asked(session, types.CreateMessageRequest(params=sample), types.CreateMessageResult, None),
        await _asked(session, types.ElicitRequest(params=elicit), types.ElicitResult, None),
    ]
    with open(os.environ["HOSTILE_RECORD"], "a") as record:
        for outcome in outcomes:
            record.write(json.dumps(outcome) + "\n")


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "work":
        return await work(ctx, arguments, params.meta)
    if params.name == "push":
        task = asyncio.get_running_loop().create_task(
            push_later(ctx.session, float(arguments.get("delay_s", 0.2)))
        )
        _background.add(task)
        task.add_done_callback(_background.discard)
        return _answer({"pushing": True})
    if params.name == "who":
        return _answer(
            {
                "pid": os.getpid(),
                "who": os.environ.get("HOSTILE_WHO", ""),
                "key": os.environ.get("HOSTILE_KEY", ""),
            }
        )
    raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")


async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


def build() -> Server[Any]:
    return Server("hostile", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio() -> None:
    server = build()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(address: str) -> None:
    import uvicorn

    host, _, port = address.rpartition(":")
    uvicorn.run(build().streamable_http_app(host=host), host=host, port=int(port), log_level="warning")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        serve_http(sys.argv[2])
    else:
        anyio.run(serve_stdio)
