"""A downstream's sampling, elicitation and roots requests reach a 2026-era client as input requests
(MCP 2026-07-28 multi round-trip requests), and the answers go back to the downstream.

server-everything speaks the handshake era and asks its client (the switchboard) with requests of
its own; a 2026-era client has no connection to be asked on, so the switchboard answers its call
with `input_required`, holds the downstream's request open, and hands it the client's answers when
the client calls again with them and the `requestState` it was given.
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from tests.switchboard.everything import everything_entry
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio

HEALTH = {"liveness_s": 0.2, "readiness_s": 0.5, "check_timeout_s": 2}


class Answering:
    """A client's sampling and elicitation callbacks, and what they were asked."""

    def __init__(self) -> None:
        self.sampled: list[types.CreateMessageRequestParams] = []
        self.elicited: list[types.ElicitRequestParams] = []

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampled.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="sampled in the 2026 era"), model="test-model"
        )

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.elicited.append(params)
        return types.ElicitResult(action="accept", content={"name": "Grace Hopper", "check": True})

    def callbacks(self) -> dict[str, Any]:
        return {"sampling_callback": self.sample, "elicitation_callback": self.elicit}


async def test_a_2026_era_client_answers_sampling_and_elicitation_as_input_requests(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"everything": everything_entry()}, health={"readiness_s": 60})
    answering = Answering()
    async with switchboard(config, mode="auto", **answering.callbacks()) as client:
        assert client.protocol_version == "2026-07-28"
        await wait_for_state(client, "everything", "HEALTHY", timeout=30)
        sampling = await client.call_tool(
            "everything.trigger-sampling-request", {"prompt": "hi", "maxTokens": 5}
        )
        elicitation = await client.call_tool("everything.trigger-elicitation-request", {})
    assert answering.sampled and "hi" in str(answering.sampled[0].messages[0].content)
    assert "sampled in the 2026 era" in str(sampling.content[0])
    assert answering.elicited and "Please provide inputs" in answering.elicited[0].message
    assert "Grace Hopper" in str(elicitation.content)


@asynccontextmanager
async def http_switchboard(config: Path) -> AsyncIterator[str]:
    """A switchboard serving Streamable HTTP on a free loopback port; its /mcp URL."""
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, board)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(board)


async def test_over_http_the_rounds_reach_the_downstream_and_a_bad_state_reaches_nothing(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, {"everything": everything_entry()}, health={"readiness_s": 60})
    answering = Answering()
    async with http_switchboard(config) as url, Client(url, mode="auto", **answering.callbacks()) as client:
        assert client.protocol_version == "2026-07-28"
        await wait_for_state(client, "everything", "HEALTHY", timeout=30)
        elicitation = await client.call_tool("everything.trigger-elicitation-request", {})
        # Driven by hand: the first round asks, and its state is good for that round only.
        first = await client.session.call_tool(
            "everything.trigger-sampling-request",
            {"prompt": "by hand", "maxTokens": 5},
            allow_input_required=True,
        )
        assert isinstance(first, types.InputRequiredResult), first
        assert first.input_requests is not None and first.request_state is not None
        [(key, asked)] = first.input_requests.items()
        assert isinstance(asked, types.CreateMessageRequest) and "by hand" in str(
            asked.params.messages[0].content
        )
        reply = types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="answered by hand"), model="m"
        )
        refusals = []
        for state in (first.request_state[:-4] + "AAAA", "not-a-state"):
            with pytest.raises(MCPError) as refused:
                await client.session.call_tool(
                    "everything.trigger-sampling-request",
                    {"prompt": "by hand", "maxTokens": 5},
                    input_responses={key: reply},
                    request_state=state,
                    allow_input_required=True,
                )
            refusals.append(refused.value.error)
        with pytest.raises(MCPError) as other_arguments:
            await client.session.call_tool(
                "everything.trigger-sampling-request",
                {"prompt": "something else", "maxTokens": 5},
                input_responses={key: reply},
                request_state=first.request_state,
                allow_input_required=True,
            )
        final = await client.session.call_tool(
            "everything.trigger-sampling-request",
            {"prompt": "by hand", "maxTokens": 5},
            input_responses={key: reply},
            request_state=first.request_state,
            allow_input_required=True,
        )
        with pytest.raises(MCPError) as replayed:
            await client.session.call_tool(
                "everything.trigger-sampling-request",
                {"prompt": "by hand", "maxTokens": 5},
                input_responses={key: reply},
                request_state=first.request_state,
                allow_input_required=True,
            )
    assert "Grace Hopper" in str(elicitation.content)
    assert isinstance(final, types.CallToolResult) and "answered by hand" in str(final.content[0])
    for error in [*refusals, other_arguments.value.error, replayed.value.error]:
        assert (error.code, error.message) == (INVALID_PARAMS, "Invalid or expired requestState"), error
    # Nothing the refused rounds carried reached the downstream: it was asked (by hand) once only.
    assert answering.sampled == []


def asking_servers(downstreams: Downstreams) -> dict[str, Any]:
    """Two fault servers with the `ask` tool: one of the 2026 era (stateless input requests), one of
    the handshake era (its own elicitation request)."""
    modern, old = downstreams.fault("modern"), downstreams.fault("old")
    modern["env"] |= {"FAULT_ERA": "modern", "FAULT_ASK": "1"}
    old["env"] |= {"FAULT_ASK": "1"}
    return {"modern": modern, "old": old}


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_each_era_of_client_answers_each_era_of_downstream(tmp_path: Path, era: str) -> None:
    config = write_config(tmp_path, asking_servers(Downstreams(tmp_path)), health=HEALTH)
    asked: list[str] = []

    async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": f"a {era} client"})

    async with switchboard(config, mode=era, elicitation_callback=elicit) as client:
        await wait_for_state(client, "modern", "HEALTHY")
        await wait_for_state(client, "old", "HEALTHY")
        from_modern = await client.call_tool("modern.ask", {})
        from_old = await client.call_tool("old.ask", {})
    assert asked == ["who are you?", "who are you?"]
    # The 2026-era server saw the answer in its own round, with the state it had given.
    assert from_modern.structured_content == {
        "who": {"name": f"a {era} client"},
        "era": "2026",
        "state": "asked",
    }
    assert from_old.structured_content == {"who": {"name": f"a {era} client"}, "era": "handshake"}


async def test_a_client_without_the_capability_is_not_asked(tmp_path: Path) -> None:
    config = write_config(tmp_path, asking_servers(Downstreams(tmp_path)), health=HEALTH)
    async with switchboard(config, mode="auto") as client:  # no elicitation callback: not declared
        await wait_for_state(client, "old", "HEALTHY")
        with pytest.raises(MCPError) as refused:
            await client.call_tool("old.ask", {})
    # The downstream's request was refused at once (spec: never send what the client did not declare);
    # the fault server lets that error be its own answer, passed through as itself.
    assert "did not declare the elicitation capability" in refused.value.error.message
