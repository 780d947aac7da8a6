"""The first tools/list waits for start-up; the switchboard's own errors never break a tool's output schema.

SPEC §7: an error of the switchboard's own making for a downstream tool that advertises an
`outputSchema` carries `structuredContent` only if the envelope validates against that schema;
otherwise the envelope travels as the JSON text block alone. The first tools/list of a session
waits (bounded by `startup_wait_s`) until every downstream has had its first verdict.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from colibri.switchboard.base import ConfigError, envelopes
from colibri.switchboard.config import parse
from colibri.tools.catalog import TOOLS
from tests.switchboard.fault_server import WORK_OUTPUT
from tests.switchboard.helpers import Downstreams, own_answer, switchboard, wait_for_state, write_config

pytestmark = pytest.mark.anyio

QUIET = {"liveness_s": 30, "readiness_s": 30, "check_timeout_s": 0.5, "restart_backoff_s": 0.2}


def test_own_errors_are_structured_only_where_they_fit_every_schema_the_client_holds() -> None:
    colibri_schema = TOOLS[0].output_schema
    broken = {"type": "object", "properties": {"x": {"type": "no-such-type"}}}
    cases = {
        "no schema": ([], True),
        "a tool without one": ([None], True),
        "a Colibri tool (its schema admits Pattern A)": ([colibri_schema], True),
        "a {x: integer, by: string} tool": (
            [
                {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}, "by": {"type": "string"}},
                    "required": ["x", "by"],
                }
            ],
            False,
        ),
        "the fault server's work": ([WORK_OUTPUT], False),
        "a fallback: one of its entries would reject it": ([colibri_schema, WORK_OUTPUT], False),
        "a broken schema": ([broken], False),
    }
    for what, (schemas, structured) in cases.items():
        result = envelopes.error("SERVICE_UNAVAILABLE", "x is unavailable: why", schemas=schemas, tool="x")
        assert result.is_error is True, what
        text = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert text["error"]["code"] == "SERVICE_UNAVAILABLE", what
        assert (result.structured_content == text) if structured else (result.structured_content is None), (
            what
        )
        dumped = result.model_dump(by_alias=True, exclude_none=True)
        assert ("structuredContent" in dumped) is structured, what


async def test_timeouts_and_refusals_for_a_tool_with_an_output_schema_travel_as_text(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {"f": downstreams.fault("f"), "c": downstreams.colibri()},
        health={**QUIET, "call_timeout_s": 0.5, "failures_to_quarantine": 1, "cooldown_s": 30},
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "f", "HEALTHY")
        downstreams.set_mode("f", "timeout")
        timed_out = await client.call_tool("f.work", {})
        await wait_for_state(client, "f", "QUARANTINE")
        refused = await client.call_tool("f.work", {})
        await wait_for_state(client, "c", "HEALTHY")
        colibri_ok = await client.call_tool("c.server_ping", {})
    assert timed_out.structured_content is None and refused.structured_content is None
    assert own_answer(timed_out)["error"]["code"] == "UPSTREAM_TIMEOUT"
    assert own_answer(refused)["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert "f quarantined" in own_answer(refused)["error"]["message"]
    assert colibri_ok.structured_content is not None and colibri_ok.structured_content["ok"] is True


async def test_the_first_tools_list_already_lists_the_downstream_tools(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"c": downstreams.colibri(), "f": downstreams.fault("f")}, health=QUIET)
    async with switchboard(config) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"switchboard_status", "c.server_ping", "c.task_create", "f.work"} <= names


async def test_the_start_up_wait_is_bounded_by_startup_wait_s(tmp_path: Path) -> None:
    """A downstream that never answers its checks holds the first tools/list for startup_wait_s at most."""
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {"h": downstreams.fault("h", mode="hang")},
        health={**QUIET, "check_timeout_s": 30},
        startup_wait_s=3,
    )
    async with switchboard(config) as client:
        started = time.monotonic()
        first = {tool.name for tool in (await client.list_tools()).tools}
        waited = time.monotonic() - started
        started = time.monotonic()
        await client.list_tools()
        second = time.monotonic() - started
    assert first == {"switchboard_status"}
    assert 2.0 < waited < 8.0, f"the first tools/list waited {waited:.1f}s; the bound is 3s from start-up"
    assert second < 1.0, "once start-up is over, tools/list answers at once"


def test_startup_wait_s_is_a_config_key() -> None:
    servers = {"mcpServers": {"a": {"command": "x"}}}
    assert parse(json.dumps(servers)).startup_wait_s == 10.0
    assert parse(json.dumps({**servers, "startup_wait_s": 0.5})).startup_wait_s == 0.5
    assert parse(json.dumps({**servers, "startup_wait_s": 0})).startup_wait_s == 0
    with pytest.raises(ConfigError) as caught:
        parse(json.dumps({**servers, "startup_wait_s": -1}))
    assert (caught.value.path, caught.value.message) == (
        "startup_wait_s",
        "expected a number of seconds >= 0, got -1",
    )


async def test_a_call_sent_before_the_first_verdict_waits_for_it(tmp_path: Path) -> None:
    """Like the first tools/list, a call to a server still STARTING is routed once its verdict is in."""
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"c": downstreams.colibri()}, health=QUIET)
    async with switchboard(config) as client:
        first = await client.call_tool("c.server_ping", {})
    assert first.is_error is False and first.structured_content is not None
    assert first.structured_content["ok"] is True
