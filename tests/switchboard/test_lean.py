"""The lean lane: tools/call over stdio answered at the JSON level, beside the SDK (lean.py, lanes.py).

Every test here drives a real `colibri switchboard` subprocess with a real client; the downstream
tells which request id it saw, so each test knows the call took the lean lane ("sb-N") and not the
SDK's (an integer). The other switchboard tests (timeouts, progress, fallback, crashes, health) go
through the same lane whenever both sides are stdio, which `test_routed_calls_take_the_lean_lane`
pins down.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.switchboard.helpers import (
    Downstreams,
    call,
    servers,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio

HEALTH = {"liveness_s": 0.2, "readiness_s": 0.5, "check_timeout_s": 2, "restart_backoff_s": 0.2}


async def seen_id(client: Client, server: str) -> Any:
    result = await client.call_tool(f"{server}.info", {})
    assert not result.is_error and result.structured_content is not None, result
    return result.structured_content["request_id"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_routed_calls_take_the_lean_lane(tmp_path: Path, mode: str) -> None:
    downstreams = Downstreams(tmp_path)
    modern = {
        **downstreams.fault("modern"),
        "env": {**downstreams.fault("modern")["env"], "FAULT_ERA": "modern"},
    }
    config = write_config(tmp_path, {"old": downstreams.fault("old"), "modern": modern}, health=HEALTH)
    async with switchboard(config, mode=mode) as client:
        await wait_for_state(client, "old", "HEALTHY")
        await wait_for_state(client, "modern", "HEALTHY")
        ids = [await seen_id(client, "old"), await seen_id(client, "modern")]
        work = await client.call_tool("modern.work", {"value": 7})
        listed = await servers(client)
    assert all(isinstance(i, str) and i.startswith("sb-") for i in ids), ids
    assert work.structured_content == {"echo": {"value": 7}, "server": "modern", "call": 1}
    # The 2026-era downstream's own identity is not passed off as the switchboard's.
    assert (
        work.meta is None or work.meta.get("io.modelcontextprotocol/serverInfo", {}).get("name") != "modern"
    )
    assert listed["modern"]["protocol_version"] == "2026-07-28" and listed["old"]["state"] == "HEALTHY"


async def test_a_cancelled_call_is_cancelled_downstream_and_never_counted_against_it(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"r": downstreams.fault("r", "timeout")}, health=HEALTH)
    cancelled = Path(f"{downstreams.counter('r')}.cancelled")
    async with switchboard(config) as client:
        await wait_for_state(client, "r", "HEALTHY")
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("r.work", {"value": 1})
        with anyio.fail_after(10):
            while not cancelled.exists():
                await anyio.sleep(0.05)
        downstreams.set_mode("r", "answer")
        after = await client.call_tool("r.work", {"value": 2})
        state = (await servers(client))["r"]
    assert scope.cancelled_caught
    assert cancelled.read_text().splitlines() == ["1"], "the downstream was told to stop call 1"
    assert after.structured_content == {"echo": {"value": 2}, "server": "r", "call": 2}
    assert state["state"] == "HEALTHY" and state["failures"]["calls"] == 0, state


async def test_lean_and_sdk_traffic_interleave(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"a": downstreams.fault("a"), "b": downstreams.fault("b")}, health=HEALTH)
    answers: dict[str, list[Any]] = {"calls": [], "reads": [], "lists": []}
    async with switchboard(config) as client:
        await wait_for_state(client, "a", "HEALTHY")
        await wait_for_state(client, "b", "HEALTHY")

        async def calls(server: str) -> None:
            for n in range(15):
                result = await client.call_tool(f"{server}.work", {"value": n})
                answers["calls"].append((server, n, result.structured_content))

        async def reads() -> None:
            for _ in range(15):
                answers["reads"].append(await client.read_resource("fault://a/status"))
                answers["lists"].append(await client.list_tools())

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(calls, "a")
            tasks.start_soon(calls, "b")
            tasks.start_soon(reads)
        ids = {await seen_id(client, "a"), await seen_id(client, "b")}
    assert len(answers["calls"]) == 30
    assert all(
        content["echo"] == {"value": n} and content["server"] == s for s, n, content in answers["calls"]
    )
    assert len(answers["reads"]) == 15 and all(r.contents for r in answers["reads"])
    assert all("a.work" in {t.name for t in listed.tools} for listed in answers["lists"])
    assert all(str(i).startswith("sb-") for i in ids)


async def test_errors_pass_through_the_lean_lane_as_on_the_sdk_path(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    entry = downstreams.fault("r", tools={"deny": ["set_*"]}, tool_timeouts={"work": 0.3})
    config = write_config(tmp_path, {"r": entry}, health={**HEALTH, "failures_to_quarantine": 10})
    async with switchboard(config) as client:
        await wait_for_state(client, "r", "HEALTHY")
        refused = await call(client, "r.set_mode", {"mode": "fail"})
        unknown = await call(client, "r.nothing", {})
        downstreams.set_mode("r", "error")
        own_error = await client.call_tool("r.work", {})
        downstreams.set_mode("r", "fail")
        with pytest.raises(Exception, match="injected failure") as rpc:
            await client.call_tool("r.work", {})
        downstreams.set_mode("r", "malformed")
        malformed = await call(client, "r.work", {})
        downstreams.set_mode("r", "slow", delay_s=1.0)
        slow = await call(client, "r.work", {})
        state = (await servers(client))["r"]
    assert refused["error"]["code"] == "UNKNOWN_TOOL" and unknown["error"]["code"] == "UNKNOWN_TOOL"
    assert own_error.is_error and own_error.structured_content is not None
    assert own_error.structured_content["error"]["code"] == "ERR_INJECTED"
    assert getattr(rpc.value, "code", None) == types.INTERNAL_ERROR
    assert malformed["error"]["code"] == "UPSTREAM_ERROR" and "repeated" in malformed["error"]["details"]
    assert slow["error"]["code"] == "UPSTREAM_TIMEOUT" and "0.3 s" in slow["error"]["message"]
    # The injected failure, the malformed answer and the timeout each counted; the tool's own
    # isError answer did not.
    assert state["failures"]["calls"] == 3, state


def test_requests_piped_before_the_end_of_input_are_all_answered(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"r": downstreams.fault("r", "slow")}, health=HEALTH)
    downstreams.set_mode("r", "slow", delay_s=0.3)
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {"name": "r.work", "arguments": {"n": n}},
            }
            for n in (1, 2, 3)
        ),
    ]
    piped = "".join(json.dumps(line) + "\n" for line in lines).encode()
    done = subprocess.run(
        switchboard_command(config),
        input=piped,
        capture_output=True,
        env=switchboard_env(),
        timeout=60,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    by_id = {answer.get("id"): answer for answer in answers if "id" in answer}
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert {1, 2, 3} <= by_id.keys(), answers
    assert [by_id[n]["result"]["structuredContent"]["echo"] for n in (1, 2, 3)] == [
        {"n": n} for n in (1, 2, 3)
    ]
