"""The seam every routed call passes (routing/observers.py), on both lanes, with the downstream
transport injected: what observers see, a refusal, an answer held until an observer is done.

The SDK's lane is `Switchboard.call`; the lean lane is a real `ClientLane` whose answers are read
off a real pipe, over a downstream session that answers from the event loop's callbacks as the
lean lane to a stdio server does.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import mcp_types as types
import pytest
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from starlette.requests import Request

from colibri.core.identity import Identity
from colibri.pipes import LineWriter
from colibri.switchboard.base import Abandon, Done, DownstreamError, Hooks, NotSent
from colibri.switchboard.config import ServerSpec, parse
from colibri.switchboard.faces import ClientLane
from colibri.switchboard.faces.mcp_server import principal_of
from colibri.switchboard.health import State, Transition
from colibri.switchboard.routing import LOCAL, Answer, Observer, Outcome, Refusal, RoutedCall, Switchboard

pytestmark = pytest.mark.anyio

CONFIG = {
    "mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}},
    "fallbacks": {"search": ["a.search", "b.search"]},
    "health": {"liveness_s": 60, "readiness_s": 60},
}
DOCUMENT = types.Resource(uri="file:///a/doc.txt", name="doc")
PROMPT = types.Prompt(name="greet")


class Session:
    """A `DownstreamSession` answering from memory; `send_raw` answers from a loop callback."""

    def __init__(self, name: str, *, fails: DownstreamError | None = None) -> None:
        self.name = name
        self.fails = fails
        self.calls: list[str] = []
        self._closed = anyio.Event()

    server_name = property(lambda self: self.name)
    protocol_version = property(lambda self: "2025-11-25")
    is_closed = property(lambda self: self._closed.is_set())

    async def wait_closed(self) -> None:
        await self._closed.wait()

    async def ping(self, timeout: float) -> None:
        return None

    async def list_tools(self, timeout: float) -> list[types.Tool]:
        return [types.Tool(name="search", input_schema={"type": "object"})]

    def _result(self, tool: str) -> dict[str, Any]:
        self.calls.append(tool)
        if self.fails is not None:
            raise self.fails
        return {"content": [{"type": "text", "text": f"{self.name}.{tool}"}]}

    async def call_tool(self, name: str, arguments: Any, timeout: float, on_progress: Any = None) -> Any:
        return types.CallToolResult.model_validate(self._result(name))

    async def call_raw(self, name: str, arguments: Any, timeout: float, on_progress: Any = None) -> Any:
        return self._result(name)

    def send_raw(
        self, name: str, arguments: Any, timeout: float, on_progress: Any, done: Done
    ) -> Abandon | None:
        try:
            outcome: dict[str, Any] | DownstreamError = self._result(name)
        except DownstreamError as exc:
            outcome = exc
        asyncio.get_running_loop().call_soon(done, outcome)
        return lambda reason: None

    @property
    def capabilities(self) -> types.ServerCapabilities:
        return types.ServerCapabilities(
            tools=types.ToolsCapability(),
            resources=types.ResourcesCapability(),
            prompts=types.PromptsCapability(),
        )

    async def request(self, request: Any, result_type: Any, timeout: float) -> Any:
        if isinstance(request, types.ListResourcesRequest):
            return types.ListResourcesResult(resources=[DOCUMENT] if self.name == "a" else [])
        if isinstance(request, types.ListResourceTemplatesRequest):
            return types.ListResourceTemplatesResult(resource_templates=[])
        if isinstance(request, types.ListPromptsRequest):
            return types.ListPromptsResult(prompts=[PROMPT] if self.name == "a" else [])
        if isinstance(request, types.ReadResourceRequest):
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=DOCUMENT.uri, text="hi")]
            )
        assert isinstance(request, types.GetPromptRequest)
        return types.GetPromptResult(messages=[])


class Recorder(Observer):
    """Writes down every moment it is shown; refuses what `refuse` names; holds answers on `hold`."""

    def __init__(self, refuse: str = "", hold: anyio.Event | None = None) -> None:
        self.seen: list[tuple[str, Any, Any]] = []
        self.refuse = refuse
        self.hold = hold

    def admit(self, call: RoutedCall) -> Refusal | None:
        self.seen.append(("admit", call, None))
        if call.name == self.refuse:
            return Refusal("TOOL_NOT_ADMITTED", f"{call.name} is not for {call.principal}", {"policy": "p"})
        return None

    def before_answer(self, call: RoutedCall, answer: Answer) -> Awaitable[None] | None:
        self.seen.append(("before", call, answer))
        return None if self.hold is None else self.hold.wait()

    def after_answer(self, call: RoutedCall, answer: Answer) -> None:
        self.seen.append(("after", call, answer))

    def moved(self, server: str, transition: Transition) -> None:
        self.seen.append(("moved", server, transition.target))

    def left(self, server: str) -> None:
        self.seen.append(("left", server, None))

    def moments(self) -> list[str]:
        return [moment for moment, _, _ in self.seen if moment in ("admit", "before", "after")]


@asynccontextmanager
async def running(sessions: dict[str, Session], *observers: Observer) -> AsyncIterator[Switchboard]:
    @asynccontextmanager
    async def connector(spec: ServerSpec, hooks: Hooks, timeout: float) -> AsyncIterator[Session]:
        yield sessions[spec.name]

    board = Switchboard(parse(json.dumps(CONFIG)), connector=connector, observers=observers)
    async with anyio.create_task_group() as tasks:
        await tasks.start(board.run)
        with anyio.fail_after(5):
            await board.settled(5)
        yield board
        tasks.cancel_scope.cancel()


async def test_the_sdk_lane_shows_each_call_to_the_observers_with_every_entry_tried() -> None:
    recorder = Recorder()
    sessions = {"a": Session("a", fails=NotSent("the connection is closed")), "b": Session("b")}
    async with running(sessions, recorder) as board:
        result = await board.call("search", {"q": "x"}, principal="alice")
    assert result.content[0].text == "b.search"  # type: ignore[union-attr]
    assert recorder.moments() == ["admit", "before", "after"]
    _, call, answer = recorder.seen[-1]
    assert call == RoutedCall("search", {"q": "x"}, "alice", "tools/call", identity=Identity("alice"))
    assert answer.outcome is Outcome.OK
    assert [(t.server, t.target, t.outcome) for t in answer.tried] == [
        ("a", "search", "error"),
        ("b", "search", "ok"),
    ]


async def test_a_refusal_is_a_denied_envelope_and_nothing_is_sent_on_either_lane() -> None:
    recorder = Recorder(refuse="search")
    sessions = {"a": Session("a"), "b": Session("b")}
    async with running(sessions, recorder) as board, lane(board) as (take, answers):
        result = await board.call("search", {})
        take(tool_call(7, "search"))
        answered = await answers()
    envelope = result.structured_content or {}
    assert result.is_error and envelope["error"]["code"] == "TOOL_NOT_ADMITTED"
    assert envelope["error"]["details"] == {"tool": "search", "policy": "p"}
    assert answered["id"] == 7 and answered["result"]["structuredContent"] == envelope
    assert sessions["a"].calls == sessions["b"].calls == []
    outcomes = [answer.outcome for moment, _, answer in recorder.seen if moment == "after"]
    assert outcomes == [Outcome.DENIED, Outcome.DENIED]


async def test_the_sdk_lane_answers_only_once_an_observer_that_must_finish_first_is_done() -> None:
    hold = anyio.Event()
    recorder = Recorder(hold=hold)
    async with running({"a": Session("a"), "b": Session("b")}, recorder) as board:
        results: list[types.CallToolResult] = []

        async def call() -> None:
            results.append(await board.call("a.search", {}))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call)
            await wait_for(lambda: "before" in recorder.moments())
            await anyio.sleep(0.05)  # given every chance to answer early, it has not
            assert results == [] and "after" not in recorder.moments()
            hold.set()
    assert len(results) == 1 and recorder.moments() == ["admit", "before", "after"]


async def test_the_lean_lane_answers_at_once_and_holds_its_answer_for_an_observer_that_must_finish() -> None:
    recorder = Recorder()
    sessions = {"a": Session("a"), "b": Session("b")}
    async with running(sessions, recorder) as board, lane(board) as (take, answers):
        assert take(tool_call(1, "a.search"))
        first = await answers()
        recorder.hold = hold = anyio.Event()
        assert take(tool_call(2, "a.search"))
        await wait_for(lambda: recorder.moments().count("before") == 2)
        with anyio.move_on_after(0.1):
            early = await answers()
            raise AssertionError(f"answered before the observer was done: {early}")
        hold.set()
        second = await answers()
    assert (first["id"], second["id"]) == (1, 2)
    assert first["result"]["content"] == second["result"]["content"] == [{"type": "text", "text": "a.search"}]
    calls = [call for moment, call, _ in recorder.seen if moment == "after"]
    assert calls == [RoutedCall("a.search", {}, LOCAL, "tools/call", identity=Identity(LOCAL))] * 2


class FailingAudit(Observer):
    """An observer that must finish before the answer, and fails (a store that cannot commit)."""

    def before_answer(self, call: RoutedCall, answer: Answer) -> Awaitable[None] | None:
        return self._commit()

    async def _commit(self) -> None:
        await anyio.sleep(0)
        raise OSError("disk full")


async def test_an_observer_that_fails_before_the_answer_makes_it_handler_error_on_both_lanes() -> None:
    async with running({"a": Session("a"), "b": Session("b")}, FailingAudit()) as board, lane(board) as lean:
        take, answers = lean
        result = await board.call("a.search", {})
        take(tool_call(3, "a.search"))
        answered = await answers()
    assert result.is_error and (result.structured_content or {})["error"]["code"] == "HANDLER_ERROR"
    assert answered["id"] == 3 and answered["result"]["structuredContent"] == result.structured_content
    assert "disk full" in result.structured_content["error"]["message"]  # type: ignore[index]


async def test_resources_read_and_prompts_get_pass_the_observers_too() -> None:
    recorder = Recorder(refuse="a.greet")
    async with running({"a": Session("a"), "b": Session("b")}, recorder) as board:
        read = await board.passthrough.read(DOCUMENT.uri, principal="bob")
        with pytest.raises(MCPError) as refused:
            await board.passthrough.get_prompt("a.greet", None)
    assert read.contents[0].text == "hi"  # type: ignore[union-attr]
    assert refused.value.error.message == "TOOL_NOT_ADMITTED: a.greet is not for local"
    ends = [
        (call.method, call.principal, answer.outcome)
        for moment, call, answer in recorder.seen
        if moment == "after"
    ]
    assert ends == [("resources/read", "bob", Outcome.OK), ("prompts/get", LOCAL, Outcome.DENIED)]
    tried = next(answer.tried for moment, _, answer in recorder.seen if moment == "after")
    assert [(t.server, t.target, t.outcome) for t in tried] == [("a", DOCUMENT.uri, "ok")]


async def test_servers_moving_and_leaving_reach_the_observers() -> None:
    recorder = Recorder()
    async with running({"a": Session("a"), "b": Session("b")}, recorder) as board:
        smaller = parse(json.dumps({**CONFIG, "mcpServers": {"a": {"command": "a"}}, "fallbacks": {}}))
        await board.apply(smaller)
    health = [
        (moment, server, state) for moment, server, state in recorder.seen if moment in ("moved", "left")
    ]
    assert ("moved", "a", State.HEALTHY) in health and ("moved", "b", State.HEALTHY) in health
    assert health[-1] == ("left", "b", None)


def test_the_http_face_names_the_token_of_the_request_as_the_principal() -> None:
    token = AccessToken(token="col_x", client_id="alice", scopes=[])
    signed = Request({"type": "http", "user": AuthenticatedUser(token)})
    unsigned = Request({"type": "http"})
    contexts = [
        ServerRequestContext(
            session=cast(Any, None),
            lifespan_context=None,
            protocol_version="2025-11-25",
            method="m",
            request=r,
        )
        for r in (signed, unsigned, None)
    ]
    assert [principal_of(context) for context in contexts] == ["alice", LOCAL, LOCAL]


# --- the lean lane over a real pipe -------------------------------------------------------------


def tool_call(request_id: int, name: str) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": {}},
    }
    return json.dumps(message).encode() + b"\n"


@asynccontextmanager
async def lane(board: Switchboard) -> AsyncIterator[tuple[Any, Any]]:
    """A `ClientLane` past its handshake whose answers are written to a pipe, and a reader of them."""
    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    reader = asyncio.StreamReader()
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
    )
    write_transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(write_fd, "wb", buffering=0)
    )
    client_lane = ClientLane(board, {"name": "test", "version": "0"}, limit_s=5)
    client_lane.attach(LineWriter(asyncio.StreamWriter(write_transport, protocol, None, loop)))
    client_lane.take(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\n')

    async def answers() -> dict[str, Any]:
        with anyio.fail_after(5):
            answer: dict[str, Any] = json.loads(await reader.readline())
        return answer

    try:
        async with client_lane.running():
            yield client_lane.take, answers
    finally:
        write_transport.close()
        read_transport.close()


async def wait_for(condition: Any) -> None:
    with anyio.fail_after(5):
        while not condition():
            await anyio.sleep(0.005)
