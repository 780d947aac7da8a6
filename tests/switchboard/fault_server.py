"""A downstream MCP server that misbehaves on demand, for the switchboard tests.

Run it as `python fault_server.py` (stdio) or `python fault_server.py --http HOST:PORT`.

Environment:
  FAULT_NAME     the server name (default "fault")
  FAULT_MODE     how `work` behaves at start (default "answer")
  FAULT_CONTROL  a JSON file {"mode": ..., "delay_s": ...}; when it exists it is re-read on every
                 request and wins over FAULT_MODE, so a test can change the behaviour of a server
                 the switchboard no longer routes to
  FAULT_COUNT    a file that gets one line per `work` call received (it survives restarts), and
                 FAULT_COUNT.cancelled one line per `work` call cancelled in the "timeout" mode
  FAULT_DELAY_S  the delay of the "slow" mode (default 0.5)
  FAULT_ERA      "modern" refuses the initialize handshake: the server speaks only the 2026 era
  FAULT_URI      the URI of its one resource (default fault://NAME/status)
  FAULT_ASK      "1" adds the tool `ask`, which asks its client who it is (an elicitation) before it
                 answers: as a 2026-era input request (the server keeps no state between rounds) or,
                 in the handshake era, as a request of its own
  FAULT_LINGER   "1" keeps the process alive after its stdin ends, as a server whose timers keep
                 it running does (server-everything); only a signal stops it then
  FAULT_DESCRIPTION_FILE  a file read at every tools/list: when it exists, its text is the
                 description of `work` (a server that silently changes what a tool says it does)
  FAULT_DEFINITION_FILE  a file read at every tools/list: when it exists, its JSON object's fields
                 (as the protocol names them: `_meta`, `icons`, `execution`, ...) replace those of
                 `work`'s definition

Besides its tools it offers one resource, `fault://NAME/status` (subscribable: the `touch` tool
sends its update to a subscriber), and one prompt, `greet`, so that what health does to resources
and prompts can be seen.

Modes of `work`:
  answer     structured {"echo", "server", "call"} and the same JSON as text
  error      an isError result (the tool's own refusal, passed through unchanged)
  fail       a JSON-RPC internal error
  timeout    never answers `work` (everything else still answers)
  hang       never answers anything, pings and tools/list included
  crash      the process exits as soon as `work` arrives
  flap       odd calls answer, even calls fail
  malformed  structured content that breaks the tool's own output schema
  slow       answers after FAULT_DELAY_S / delay_s seconds
"""

from __future__ import annotations

import json
import os
import sys
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

NAME = os.environ.get("FAULT_NAME", "fault")
MODES = ("answer", "error", "fail", "timeout", "hang", "crash", "flap", "malformed", "slow")
WORK_OUTPUT = {
    "type": "object",
    "properties": {"echo": {}, "server": {"type": "string"}, "call": {"type": "integer"}},
    "required": ["echo", "server", "call"],
}
TOOLS = [
    types.Tool(
        name="work",
        description="Do some work: behaves as the current fault mode says.",
        input_schema={"type": "object", "properties": {"value": {}}},
        output_schema=WORK_OUTPUT,
    ),
    types.Tool(name="info", description="pid, calls received, mode.", input_schema={"type": "object"}),
    types.Tool(name="touch", description="Update the status resource.", input_schema={"type": "object"}),
    types.Tool(
        name="set_mode",
        description="Switch the fault mode.",
        input_schema={
            "type": "object",
            "properties": {"mode": {"enum": list(MODES)}, "delay_s": {"type": "number"}},
            "required": ["mode"],
        },
    ),
]

ASK = types.Tool(
    name="ask", description="Ask the client who it is, then say so.", input_schema={"type": "object"}
)
if os.environ.get("FAULT_ASK") == "1":
    TOOLS.append(ASK)
WHO = types.ElicitRequestFormParams(
    message="who are you?",
    requested_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)


class Faults:
    """The current mode, from the control file when there is one, and the calls counted so far."""

    def __init__(self) -> None:
        self.mode = os.environ.get("FAULT_MODE", "answer")
        self.delay_s = float(os.environ.get("FAULT_DELAY_S", "0.5"))
        self.calls = 0
        control = os.environ.get("FAULT_CONTROL")
        count = os.environ.get("FAULT_COUNT")
        self.control = Path(control) if control else None
        self.count = Path(count) if count else None

    def refresh(self) -> None:
        if self.control is not None and self.control.exists():
            settings = json.loads(self.control.read_text() or "{}")
            self.mode = settings.get("mode", self.mode)
            self.delay_s = float(settings.get("delay_s", self.delay_s))

    def set(self, mode: str, delay_s: float | None) -> None:
        self.mode = mode
        if delay_s is not None:
            self.delay_s = delay_s
        if self.control is not None:
            self.control.write_text(json.dumps({"mode": mode, "delay_s": self.delay_s}))

    def received(self) -> int:
        self.calls += 1
        if self.count is not None:
            descriptor = os.open(self.count, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            os.write(descriptor, f"{os.getpid()} {self.mode}\n".encode())
            os.close(descriptor)
        return self.calls


FAULTS = Faults()
# The Authorization header of the last HTTP request, so a test can see what the switchboard sent.
LAST_AUTHORIZATION: list[str | None] = [None]
# Its Mcp-Session-Id, so a test can end that session from outside (a downstream's session expiry).
LAST_SESSION: list[str | None] = [None]
CALL_NUMBER: ContextVar[int] = ContextVar("call_number", default=0)


def answer(data: dict[str, Any], *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(data, sort_keys=True))],
        structured_content=data,
        is_error=is_error,
    )


async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    described = os.environ.get("FAULT_DESCRIPTION_FILE")
    if described is None or not Path(described).exists():
        return types.ListToolsResult(tools=[work_definition(), *TOOLS[1:]])
    work_tool = TOOLS[0].model_copy(update={"description": Path(described).read_text()})
    return types.ListToolsResult(tools=[work_tool, *TOOLS[1:]])


def work_definition() -> types.Tool:
    defined = os.environ.get("FAULT_DEFINITION_FILE")
    if defined is None or not Path(defined).exists():
        return TOOLS[0]
    fields = json.loads(Path(defined).read_text())
    return types.Tool.model_validate(TOOLS[0].model_dump(by_alias=True, exclude_none=True) | fields)


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    arguments = params.arguments or {}
    if params.name == "info":
        return answer(
            {
                "pid": os.getpid(),
                "calls": FAULTS.calls,
                "mode": FAULTS.mode,
                "name": NAME,
                "authorization": LAST_AUTHORIZATION[0],
                "session_id": LAST_SESSION[0],
                "request_id": ctx.request_id,
            }
        )
    if params.name == "touch":
        touched = STATUS_URI in SUBSCRIBED
        if touched:
            await ctx.session.send_resource_updated(STATUS_URI)
        return answer({"touched": touched})
    if params.name == "ask":
        return await ask(ctx, params)
    if params.name == "set_mode":
        FAULTS.set(str(arguments["mode"]), arguments.get("delay_s"))
        return answer({"mode": FAULTS.mode})
    if params.name != "work":
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
    return await work(arguments)


async def ask(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    if ctx.protocol_version != "2026-07-28":
        said = await ctx.session.send_request(types.ElicitRequest(params=WHO), types.ElicitResult)
        return answer({"who": said.content, "era": "handshake"})
    said = (params.input_responses or {}).get("who")
    if isinstance(said, types.ElicitResult):
        return answer({"who": said.content, "era": "2026", "state": params.request_state})
    return types.InputRequiredResult(
        input_requests={"who": types.ElicitRequest(params=WHO)}, request_state="asked"
    )


async def work(arguments: dict[str, Any]) -> types.CallToolResult:
    call = CALL_NUMBER.get()
    mode = FAULTS.mode
    if mode == "crash":
        os._exit(3)
    if mode == "timeout":
        try:
            await anyio.sleep_forever()
        finally:
            # Reached only when the request is cancelled: the tests see that the cancellation came.
            count = os.environ.get("FAULT_COUNT")
            if count:
                with Path(f"{count}.cancelled").open("a") as cancelled:
                    cancelled.write(f"{call}\n")
    if mode == "slow":
        await anyio.sleep(FAULTS.delay_s)
    if mode == "fail" or (mode == "flap" and call % 2 == 0):
        raise MCPError(types.INTERNAL_ERROR, f"injected failure on call {call}")
    if mode == "error":
        return answer(
            {"ok": False, "error": {"code": "ERR_INJECTED", "message": "the tool refused"}}, is_error=True
        )
    if mode == "malformed":
        return answer({"echo": arguments, "server": 42})
    return answer({"echo": arguments, "server": NAME, "call": call})


async def count_and_hang(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Counts every `work` call as it arrives, before any fault can swallow it."""
    if ctx.method == "initialize" and os.environ.get("FAULT_ERA") == "modern":
        raise MCPError(types.INVALID_REQUEST, "this server speaks only the 2026-07-28 era")
    FAULTS.refresh()
    headers = getattr(ctx.request, "headers", None)
    if headers is not None:
        LAST_AUTHORIZATION[0] = headers.get("authorization")
        LAST_SESSION[0] = headers.get("mcp-session-id")
    if ctx.method == "tools/call" and (ctx.params or {}).get("name") == "work":
        CALL_NUMBER.set(FAULTS.received())
    if FAULTS.mode == "hang" and ctx.method != "initialize":
        await anyio.sleep_forever()
    return await call_next(ctx)


STATUS_URI = os.environ.get("FAULT_URI", f"fault://{NAME}/status")


async def list_resources(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[types.Resource(uri=STATUS_URI, name="status")])


async def read_resource(
    ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    if params.uri != STATUS_URI:
        raise MCPError(-32002, f"no resource {params.uri}")
    text = json.dumps({"name": NAME, "mode": FAULTS.mode, "pid": os.getpid()})
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=STATUS_URI, text=text)])


SUBSCRIBED: set[str] = set()


async def subscribe(
    ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
) -> types.EmptyResult:
    SUBSCRIBED.add(params.uri)
    return types.EmptyResult()


async def unsubscribe(
    ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
) -> types.EmptyResult:
    SUBSCRIBED.discard(params.uri)
    return types.EmptyResult()


async def list_prompts(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListPromptsResult:
    argument = types.PromptArgument(name="who", required=True)
    return types.ListPromptsResult(
        prompts=[types.Prompt(name="greet", description="A greeting from this server.", arguments=[argument])]
    )


async def get_prompt(
    ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    who = (params.arguments or {}).get("who", "nobody")
    message = types.PromptMessage(role="user", content=types.TextContent(text=f"{NAME} greets {who}"))
    return types.GetPromptResult(messages=[message])


def build() -> Server[Any]:
    server: Server[Any] = Server(
        NAME,
        version="1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    server.middleware = [count_and_hang]
    return server


async def serve_stdio() -> None:
    server = build()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
    if os.environ.get("FAULT_LINGER") == "1":
        await anyio.sleep(3600)


def serve_http(address: str) -> None:
    import uvicorn

    host, _, port = address.rpartition(":")
    app = build().streamable_http_app(host=host)
    uvicorn.run(app, host=host, port=int(port), log_level="warning")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        serve_http(sys.argv[2])
    else:
        anyio.run(serve_stdio)
