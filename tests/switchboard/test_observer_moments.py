"""The seam's moments around sending and listing (routing/observers.py), on both lanes, with the
downstream transport injected (test_observers.py's sessions and lane): an entry held until an
observer clears it, a refusal before sending, names hidden from one principal, and what the
observers add to the status and see of each server's tools and of a reload."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from colibri.switchboard.config import SwitchboardConfig, parse
from colibri.switchboard.routing import Observer, Refusal, RoutedCall, Who
from tests.switchboard.test_observers import CONFIG, DOCUMENT, Session, lane, running, tool_call, wait_for

pytestmark = pytest.mark.anyio


class Gate(Observer):
    """Holds each entry until `opened`, refuses those named in `refuse`, hides names from `hidden`."""

    def __init__(self) -> None:
        self.opened: anyio.Event | None = None
        self.refuse: set[str] = set()
        self.hidden: dict[str, set[str]] = {}
        self.sending: list[tuple[str, str]] = []
        self.listed_tools: dict[str, list[str]] = {}
        self.configs: list[SwitchboardConfig] = []
        self.changed: Callable[[], None] | None = None

    def before_send(self, call: RoutedCall, target: str) -> Refusal | Awaitable[Refusal | None] | None:
        self.sending.append((call.subject, target))
        if target in self.refuse:
            return Refusal("HANDLER_ERROR", f"{target} cannot be recorded", {"retryable": True})
        return None if self.opened is None else self._wait(self.opened)

    @staticmethod
    async def _wait(opened: anyio.Event) -> Refusal | None:
        await opened.wait()
        return None

    def hides(self, principal: Who | None, name: str) -> str | None:
        # A call's route names its caller by its whole Identity, a list by what it was given.
        who = principal if principal is None or isinstance(principal, str) else principal.principal
        return "hidden by the gate" if who is not None and name in self.hidden.get(who, ()) else None

    def listed(self, server: str, tools: Mapping[str, types.Tool]) -> None:
        self.listed_tools[server] = sorted(tools)

    def report(self) -> dict[str, Any]:
        return {"gate": {"held": self.opened is not None}}

    def reconfigured(self, config: SwitchboardConfig) -> None:
        self.configs.append(config)

    def attach(self, lists_changed: Callable[[], None]) -> None:
        self.changed = lists_changed


async def test_an_entry_is_sent_only_once_the_observer_clears_it_on_both_lanes() -> None:
    gate = Gate()
    sessions = {"a": Session("a"), "b": Session("b")}
    async with running(sessions, gate) as board, lane(board) as (take, answers):
        gate.opened = opened = anyio.Event()
        results: list[types.CallToolResult] = []

        async def call() -> None:
            results.append(await board.call("a.search", {}))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call)
            assert take(tool_call(5, "a.search"))
            await wait_for(lambda: len(gate.sending) == 2)
            await anyio.sleep(0.05)  # every chance to send early
            assert sessions["a"].calls == [] and results == []
            opened.set()
        answered = await answers()
    assert sessions["a"].calls == ["search", "search"]
    assert results[0].content[0].text == "a.search"  # type: ignore[union-attr]
    assert answered["id"] == 5 and answered["result"]["content"][0]["text"] == "a.search"


async def test_a_refusal_before_sending_sends_nothing_and_frees_the_server() -> None:
    gate = Gate()
    gate.refuse = {"a.search"}
    sessions = {"a": Session("a"), "b": Session("b")}
    async with running(sessions, gate) as board, lane(board) as (take, answers):
        result = await board.call("a.search", {})
        take(tool_call(6, "a.search"))
        answered = await answers()
        assert board.downstreams["a"].machine.routable  # no trial slot or ticket kept
    envelope = result.structured_content or {}
    assert result.is_error and envelope["error"]["code"] == "HANDLER_ERROR"
    assert envelope["error"]["details"] == {"tool": "a.search", "retryable": True}
    assert answered["result"]["structuredContent"] == envelope
    assert sessions["a"].calls == []


async def test_names_hidden_from_a_principal_are_not_listed_and_a_chain_skips_them() -> None:
    gate = Gate()
    gate.hidden = {"ci": {"a.search", "a:resources/read"}}
    sessions = {"a": Session("a"), "b": Session("b")}
    async with running(sessions, gate) as board:
        names = {tool.name for tool in board.tools("ci")}
        assert "a.search" not in names and {"b.search", "search"} <= names
        assert "a.search" in {tool.name for tool in board.tools("alice")}
        assert board.passthrough.resources("ci") == [] and board.passthrough.resources() == [DOCUMENT]
        result = await board.call("search", {}, principal="ci")
    assert result.content[0].text == "b.search"  # type: ignore[union-attr]
    assert sessions["a"].calls == []


async def test_resources_and_prompts_are_known_by_their_server_before_admission() -> None:
    gate = Gate()
    gate.refuse = {"a:prompts/get"}
    async with running({"a": Session("a"), "b": Session("b")}, gate) as board:
        await board.passthrough.read(DOCUMENT.uri, principal="bob")
        with pytest.raises(MCPError) as refused:
            await board.passthrough.get_prompt("a.greet", {"who": "x"})
    assert gate.sending == [("a:resources/read", "a:resources/read"), ("a:prompts/get", "a:prompts/get")]
    assert refused.value.error.message == "HANDLER_ERROR: a:prompts/get cannot be recorded"


async def test_the_observers_see_tools_reloads_and_add_to_the_status() -> None:
    gate = Gate()
    async with running({"a": Session("a"), "b": Session("b")}, gate) as board:
        assert gate.listed_tools == {"a": ["search"], "b": ["search"]}
        assert board.status()["gate"] == {"held": False}
        assert gate.changed is not None
        smaller = parse(json.dumps({**CONFIG, "fallbacks": {}}))
        await board.apply(smaller)
    assert gate.configs == [smaller]
