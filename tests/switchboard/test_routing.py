"""Listing and routing through a real switchboard in front of colibri, mcp-server-time and fault servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.helpers import chain_error, ok_data
from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    call,
    own_answer,
    switchboard,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio


def direct(entry: dict[str, Any]) -> Client:
    """A client straight to the downstream the entry describes, bypassing the switchboard."""
    return Client(StdioServerParameters(**entry), mode="legacy")


@pytest.fixture
def downstreams(tmp_path: Path) -> Downstreams:
    return Downstreams(tmp_path)


@pytest.fixture
def config(tmp_path: Path, downstreams: Downstreams) -> Path:
    return write_config(
        tmp_path,
        {
            "colibri": downstreams.colibri(),
            "minimal": downstreams.colibri(COLIBRI_MODE="MINIMAL"),
            "time": downstreams.time_server(),
            "a": downstreams.fault("a"),
            "b": downstreams.fault("b"),
            "c": downstreams.fault("c", mode="error"),
        },
        fallbacks={"work": ["a.work", "b.work"]},
        health=FAST,
    )


async def settle(client: Client) -> None:
    for name in ("colibri", "time", "a", "b", "c"):
        await wait_for_state(client, name, "HEALTHY")
    await wait_for_state(client, "minimal", "UNHEALTHY")


async def test_listing_readiness_status_and_unknown_tools(config: Path, downstreams: Downstreams) -> None:
    async with switchboard(config) as client:
        await settle(client)
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        health = ok_data(await call(client, "colibri.server_health"))
        unknown = [chain_error(await call(client, name)) for name in ("nope", "nowhere.work", "a.nope")]
        status = ok_data(await call(client, "switchboard_status"))
    async with direct(downstreams.time_server()) as time_client:
        originals = {tool.name: tool for tool in (await time_client.list_tools()).tools}

    # Namespaced tools, with the downstream's schemas, only while the server is routable.
    assert {"switchboard_status", "work", "a.work", "b.work", "colibri.server_health"} <= set(listed)
    assert not [name for name in listed if name.startswith("minimal.")], "an unhealthy server is not listed"
    for name, original in originals.items():
        assert listed[f"time.{name}"].model_dump(exclude={"name"}) == original.model_dump(exclude={"name"})
    capability = listed["work"]
    assert capability.input_schema == listed["a.work"].input_schema
    assert capability.output_schema == listed["a.work"].output_schema
    assert capability.description is not None and "a.work, b.work" in capability.description

    # A Colibri downstream must report phase2 and a mode other than MINIMAL.
    assert health["phase"] == "phase2" and health["mode"] == "FULL"
    by_name = {server["name"]: server for server in status["servers"]}
    minimal = by_name["minimal"]
    assert minimal["server_name"] == "colibri" and minimal["routable"] is False
    assert "colibri lists only server_ping and server_health" in minimal["last_failure"]
    assert minimal["last_checks"]["readiness"]["ok"] is False
    assert minimal["last_checks"]["liveness"]["ok"] is True

    # Unknown tools are refused with a Pattern A envelope that says what would be right.
    assert [error["code"] for error in unknown] == ["UNKNOWN_TOOL"] * 3
    assert "call tools/list" in unknown[0]["message"]
    assert unknown[1]["details"] == {"tool": "nowhere.work"}
    assert unknown[2]["message"].startswith("unknown tool 'a.nope': a offers info, set_mode, touch, work")

    # switchboard_status: state, checks, failures, cooldown, transitions of every downstream.
    assert status["fallbacks"] == {"work": ["a.work", "b.work"]}
    a = by_name["a"]
    assert a["state"] == "HEALTHY" and a["routable"] and a["connected"]
    assert a["transport"] == "stdio" and a["server_name"] == "a"
    assert a["tools"] == ["info", "set_mode", "touch", "work"]
    assert a["failures"] == {"consecutive": 0, "calls": 0, "checks": 0, "connects": 0}
    assert a["cooldown_left_s"] == 0 and a["trial_in_flight"] is False
    assert set(a["last_checks"]) == {"liveness", "readiness"}
    assert a["last_checks"]["liveness"]["ok"] is True
    assert a["transitions"][0]["from"] == "STARTING" and a["transitions"][0]["to"] == "HEALTHY"
    assert a["transitions"][0]["reason"].startswith("checks passed")


async def test_results_and_downstream_errors_pass_through_unchanged(
    tmp_path: Path, downstreams: Downstreams
) -> None:
    config = write_config(
        tmp_path,
        {
            "time": downstreams.time_server(),
            "a": downstreams.fault("a"),
            "b": downstreams.fault("b"),
            "c": downstreams.fault("c", mode="error"),
        },
        health=FAST,
    )
    convert = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    bad_zone = {"source_timezone": "Mars/Olympus", "time": "12:00", "target_timezone": "UTC"}
    async with direct(downstreams.time_server()) as time_client:
        expected_convert = await time_client.call_tool("convert_time", convert)
        expected_bad_zone = await time_client.call_tool("convert_time", bad_zone)
    async with direct(downstreams.fault("c-direct", mode="error")) as fault_client:
        expected_refusal = await fault_client.call_tool("work", {})
        await fault_client.call_tool("set_mode", {"mode": "fail"})
        with pytest.raises(MCPError) as direct_failure:
            await fault_client.call_tool("work", {})

    async with switchboard(config) as client:
        for name in ("time", "a", "b", "c"):
            await wait_for_state(client, name, "HEALTHY")
        through_convert = await client.call_tool("time.convert_time", convert)
        through_bad_zone = await client.call_tool("time.convert_time", bad_zone)
        through_refusal = await client.call_tool("c.work", {})
        answer = await client.call_tool("a.work", {"value": [1, "x"]})
        await client.call_tool("b.set_mode", {"mode": "fail"})
        with pytest.raises(MCPError) as through_failure:
            await client.call_tool("b.work", {})
        refusal = await client.call_tool("nope", {})

    assert through_convert.model_dump() == expected_convert.model_dump()
    assert through_convert.structured_content is not None and not through_convert.is_error
    assert through_bad_zone.model_dump() == expected_bad_zone.model_dump()
    assert through_bad_zone.is_error
    assert through_refusal.model_dump() == expected_refusal.model_dump()
    assert through_refusal.structured_content == {
        "ok": False,
        "error": {"code": "ERR_INJECTED", "message": "the tool refused"},
    }
    assert answer.structured_content == {"echo": {"value": [1, "x"]}, "server": "a", "call": 1}
    assert json.loads(answer.content[0].text) == answer.structured_content  # type: ignore[union-attr]
    assert through_failure.value.code == direct_failure.value.code == -32603
    assert through_failure.value.error.message == "injected failure on call 1"
    assert refusal.is_error and own_answer(refusal)["error"]["code"] == "UNKNOWN_TOOL"
