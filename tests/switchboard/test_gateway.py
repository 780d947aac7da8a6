"""The gateway with its downstream transport injected: routing decisions without processes or timing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest

from colibri.switchboard.base import CallTimedOut, ConnectionLost, DownstreamError, Hooks, NotSent
from colibri.switchboard.config import ServerSpec, parse
from colibri.switchboard.routing import Switchboard

pytestmark = pytest.mark.anyio

Behaviour = Callable[[str, dict[str, Any] | None], types.CallToolResult]


def answer(server: str) -> Behaviour:
    def behave(tool: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        return types.CallToolResult(content=[], structured_content={"server": server, "tool": tool})

    return behave


def raising(error: DownstreamError) -> Behaviour:
    def behave(tool: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        raise error

    return behave


class FakeSession:
    """A `DownstreamSession` that answers from memory and records what it was asked."""

    def __init__(self, name: str, behave: Behaviour) -> None:
        self.name = name
        self.behave = behave
        self.calls: list[str] = []
        self.tools = [types.Tool(name="search", input_schema={"type": "object"})]
        self.hooks: Hooks | None = None
        self._closed = anyio.Event()

    @property
    def server_name(self) -> str | None:
        return self.name

    @property
    def protocol_version(self) -> str:
        return "2025-11-25"

    @property
    def is_closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    async def ping(self, timeout: float) -> None:
        return None

    async def list_tools(self, timeout: float) -> list[types.Tool]:
        return self.tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout: float, on_progress: Any = None
    ) -> types.CallToolResult:
        self.calls.append(name)
        return self.behave(name, arguments)

    @property
    def capabilities(self) -> types.ServerCapabilities:
        return types.ServerCapabilities(tools=types.ToolsCapability())

    async def request(self, request: Any, result_type: Any, timeout: float) -> Any:
        raise AssertionError("the fake offers tools only")


CONFIG = {
    "mcpServers": {
        "a": {"command": "a", "idempotent": ["search"]},
        "b": {"command": "b"},
        "c": {"command": "c"},
    },
    "fallbacks": {"search": ["a.search", "b.search", "c.search"]},
    "health": {"liveness_s": 60, "readiness_s": 60},
}


@asynccontextmanager
async def running(sessions: dict[str, FakeSession]) -> AsyncIterator[Switchboard]:
    @asynccontextmanager
    async def connector(spec: ServerSpec, hooks: Hooks, timeout: float) -> AsyncIterator[FakeSession]:
        sessions[spec.name].hooks = hooks
        yield sessions[spec.name]

    board = Switchboard(parse(json.dumps(CONFIG)), connector=connector)
    async with anyio.create_task_group() as tasks:
        await tasks.start(board.run)
        with anyio.fail_after(5):
            await board.settled(5)
        yield board
        tasks.cancel_scope.cancel()


async def test_a_call_that_never_left_goes_to_the_next_entry_without_blame() -> None:
    sessions = {
        "a": FakeSession("a", raising(NotSent("the connection is closed"))),
        "b": FakeSession("b", answer("b")),
        "c": FakeSession("c", answer("c")),
    }
    async with running(sessions) as board:
        result = await board.call("search", {"q": "x"})
        a = board.downstreams["a"]
        assert (a.machine.state, a.machine.failures) == ("HEALTHY", 0)
    assert result.structured_content == {"server": "b", "tool": "search"}
    assert (sessions["a"].calls, sessions["b"].calls, sessions["c"].calls) == (["search"], ["search"], [])


async def test_idempotent_primary_is_repeated_but_a_non_idempotent_second_is_not() -> None:
    sessions = {
        "a": FakeSession("a", raising(ConnectionLost("the connection closed before the answer came"))),
        "b": FakeSession("b", raising(CallTimedOut("no answer within 30 s"))),
        "c": FakeSession("c", answer("c")),
    }
    async with running(sessions) as board:
        result = await board.call("search", {})
        status = board.status()
    envelope = result.structured_content or {}
    assert result.is_error and envelope["error"]["code"] == "UPSTREAM_TIMEOUT"
    assert "not repeated on c.search" in envelope["error"]["message"]
    assert sessions["c"].calls == []
    failures = {server["name"]: server["failures"]["calls"] for server in status["servers"]}
    assert failures == {"a": 1, "b": 1, "c": 0}


async def test_listeners_hear_when_the_listed_tools_change() -> None:
    sessions = {name: FakeSession(name, answer(name)) for name in "abc"}
    async with running(sessions) as board:
        heard = anyio.Event()

        async def subscriber() -> None:
            heard.set()

        board.on_tools_changed(subscriber)
        names = [tool.name for tool in board.tools()]
        sessions["a"].tools = [
            *sessions["a"].tools,
            types.Tool(name="fresh", input_schema={"type": "object"}),
        ]
        assert sessions["a"].hooks is not None
        sessions["a"].hooks.tools_changed()  # what a tools/list_changed notification does
        with anyio.fail_after(5):
            await heard.wait()
        fresh = [tool.name for tool in board.tools()]
    assert names == ["a.search", "b.search", "c.search", "search", "switchboard_status"]  # by name (SPEC §23)
    assert "a.fresh" in fresh
