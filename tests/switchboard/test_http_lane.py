"""The lean lane to a Streamable HTTP downstream (downstream/http_lane.py) answers as the SDK's path.

One real fault server over HTTP, one real connection (`open_session`, the switchboard's own
connector): each case is asked through the lane (`call_raw`) and through the SDK's client
(`call_tool`) on the same session, and the two must come to the same result or the same error.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from colibri.switchboard.base import DownstreamError, Hooks, NotSent
from colibri.switchboard.config import ServerSpec
from colibri.switchboard.downstream import open_session
from tests.switchboard.audit_helpers import answer_digest, calls
from tests.switchboard.helpers import (
    FAST,
    FAULT_SERVER,
    free_port,
    stop,
    switchboard,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_own_calls import Ear, _heard_progress, http_downstream

pytestmark = pytest.mark.anyio


@contextmanager
def remote(
    tmp_path: Path, mode: str = "answer", **extra: str
) -> Iterator[tuple[ServerSpec, Path, subprocess.Popen[bytes]]]:
    """The fault server over HTTP, and the file that counts the `work` calls it received."""
    port, count = free_port(), tmp_path / f"calls-{mode}-{len(extra)}"
    env = {**switchboard_env(), "FAULT_NAME": "f", "FAULT_MODE": mode, "FAULT_COUNT": str(count), **extra}
    server = subprocess.Popen([sys.executable, str(FAULT_SERVER), "--http", f"127.0.0.1:{port}"], env=env)
    try:
        wait_for_port(port, server)
        yield ServerSpec(name="f", url=f"http://127.0.0.1:{port}/mcp"), count, server
    finally:
        stop(server)


def hooks() -> Hooks:
    return Hooks(closed=lambda reason: None, tools_changed=lambda: None)


async def outcome(call: Awaitable[Any]) -> Any:
    """A call's result as JSON (its `call` counter zeroed: the two paths are two calls), or its error."""
    try:
        result = await call
    except DownstreamError as exc:
        return type(exc).__name__, re.sub(r"call \d+", "call N", str(exc)), exc.sent
    if isinstance(result, types.CallToolResult):
        result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if result.get("resultType") == "complete":
        del result["resultType"]  # the default: the model writes it, the handshake era's wire leaves it out
    return json.loads(re.sub(r'(\\?"call\\?": ?)\d+', r"\g<1>0", json.dumps(result)))


async def test_the_lane_answers_as_the_sdk_path(tmp_path: Path) -> None:
    with remote(tmp_path) as (spec, count, _):
        async with open_session(spec, hooks(), 10) as session:
            lean = await session.call_raw("info", {}, 5)
            sdk = (await session.call_tool("info", {}, 5)).structured_content or {}
            assert str(lean["structuredContent"]["request_id"]).startswith("sb-"), "the lane carried it"
            assert isinstance(sdk["request_id"], int), "the SDK's client numbers its own requests"

            for mode in ("answer", "error", "fail", "malformed"):
                await session.call_tool("set_mode", {"mode": mode}, 5)
                lean = await outcome(session.call_raw("work", {"n": 1}, 5))
                sdk = await outcome(session.call_tool("work", {"n": 1}, 5))
                assert lean == sdk, (mode, lean, sdk)
            assert lean[0] == "MalformedResult" and lean[2], "sent, and the schema broken"
            unknown = await outcome(session.call_raw("nope", {}, 5))
            assert unknown == await outcome(session.call_tool("nope", {}, 5))
            assert unknown[0] == "PeerError" and "Unknown tool: nope" in unknown[1]

            await session.call_tool("set_mode", {"mode": "timeout"}, 5)
            timed_out = await outcome(session.call_raw("work", {}, 0.3))
            assert timed_out == await outcome(session.call_tool("work", {}, 0.3))
            assert timed_out == ("CallTimedOut", "no answer within 0.3 s", True)
            cancelled = Path(f"{count}.cancelled")
            with anyio.fail_after(10):  # each path told the server it gave the call up (handshake era)
                while not cancelled.exists() or len(cancelled.read_text().split()) < 2:
                    await anyio.sleep(0.01)

            # The downstream ends the session (as one that expired it would): 404 on both paths.
            await session.call_tool("set_mode", {"mode": "answer"}, 5)
            session_id = (await session.call_tool("info", {}, 5)).structured_content["session_id"]  # type: ignore[index]
            async with httpx2.AsyncClient() as client:
                ended = await client.delete(spec.url or "", headers={"mcp-session-id": session_id})
            assert ended.status_code in (200, 204)
            expired = await outcome(session.call_raw("work", {}, 5))
            assert expired == await outcome(session.call_tool("work", {}, 5))
            assert expired[0] == "PeerError" and "-32600: Session not found" in expired[1]

        # Its URL with a trailing slash: the server redirects (307) within its origin, and both follow.
        slashed = replace(spec, url=f"{spec.url}/")
        async with open_session(slashed, hooks(), 10) as session:
            lean = await outcome(session.call_raw("work", {"n": 2}, 5))
            assert lean == await outcome(session.call_tool("work", {"n": 2}, 5))
            assert lean["structuredContent"]["echo"] == {"n": 2}, lean


@pytest.mark.parametrize("lane", [True, False], ids=["lane", "sdk"])
async def test_a_downstream_that_dies_mid_call_lost_a_sent_call(tmp_path: Path, lane: bool) -> None:
    """SPEC §14: lost mid-call, the call was sent (ConnectionLost) on both paths. Once the server is
    gone, the lane's next call is refused before anything is sent (NotSent); the SDK's transport
    ends the whole connection instead, which the supervisor reconnects."""
    with remote(tmp_path, "slow") as (spec, count, server):
        async with open_session(spec, hooks(), 10) as session:
            await session.call_tool("set_mode", {"mode": "slow", "delay_s": 30}, 5)
            errors: list[DownstreamError] = []

            async def asked() -> None:
                try:
                    await (session.call_raw if lane else session.call_tool)("work", {}, 20)
                except DownstreamError as exc:
                    errors.append(exc)

            with anyio.fail_after(15):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(asked)
                    while not (count.exists() and count.read_text()):
                        await anyio.sleep(0.01)  # until the server has the call
                    server.kill()
            assert [(type(e).__name__, e.sent) for e in errors] == [("ConnectionLost", True)]
            if lane:
                server.wait()  # gone, its sockets closed: nothing listens
                with pytest.raises(NotSent) as refused:
                    await session.call_raw("work", {}, 5)
                assert not refused.value.sent


async def test_through_the_switchboard_a_streamed_call_is_heard_by_its_caller_and_audited(
    tmp_path: Path,
) -> None:
    """A stdio client's calls to two HTTP downstreams ride the lane (faces/lean.py → send_raw): what
    the hostile server streams during a call (a log line, progress, an elicitation, a sampling and a
    roots request, all tied to the call) reaches the caller, and each answer is its audit row's."""
    with remote(tmp_path) as (spec, _, _):
        async with http_downstream() as url:
            servers = {"ff": {"url": spec.url}, "hh": {"url": url}}
            config = write_config(tmp_path, servers, health=FAST, audit={"db": "gateway.db"})
            ear = Ear("s1")
            async with switchboard(config, **ear.callbacks()) as client:
                await wait_for_state(client, "ff", "HEALTHY")
                await wait_for_state(client, "hh", "HEALTHY")
                info = (await client.call_tool("ff.info", {})).structured_content or {}
                progress: list[str] = []
                arguments = {"secret": "s1-1", "ask": True}
                talked = await client.call_tool(
                    "hh.work", arguments, progress_callback=partial(_heard_progress, progress)
                )
                await client.call_tool("ff.set_mode", {"mode": "error"})
                answers = [talked, await client.call_tool("ff.work", {"n": 1})]
                await client.call_tool("ff.set_mode", {"mode": "fail"})
                with pytest.raises(MCPError, match="injected failure"):
                    await client.call_tool("ff.work", {"n": 1})  # the downstream's error, passed through
    assert str(info["request_id"]).startswith("sb-"), "the lean lane carried the call"
    told = talked.structured_content or {}
    assert told["elicited"] == {"action": "accept", "content": {"who": "s1"}}, told
    assert told["sampled"]["content"]["text"] == "s1", told
    assert [root["name"] for root in told["roots"]["roots"]] == ["s1"], told
    assert progress == ["progress s1-1"]
    assert "log: log s1-1" in ear.heard and "stray" not in str(ear.heard)
    assert [answer.is_error for answer in answers] == [False, True]
    rows = [row for row in calls(tmp_path / "gateway.db") if row["tool"] in ("hh.work", "ff.work")]
    assert [(row["tool"], row["outcome"]) for row in rows] == [
        ("hh.work", "ok"),
        ("ff.work", "error"),
        ("ff.work", "error"),
    ]
    dumped = [answer.model_dump(by_alias=True, mode="json", exclude_none=True) for answer in answers]
    assert [row["result_hash"] for row in rows[:2]] == [answer_digest(answer) for answer in dumped]


async def test_a_2026_era_downstream_answers_the_lane_as_the_sdk_path(tmp_path: Path) -> None:
    with remote(tmp_path, FAULT_ERA="modern") as (spec, _, _):
        async with open_session(spec, hooks(), 10) as session:
            assert session.protocol_version == "2026-07-28"
            lean = await outcome(session.call_raw("work", {"n": 3}, 5))
            assert lean == await outcome(session.call_tool("work", {"n": 3}, 5))
            assert lean["structuredContent"]["echo"] == {"n": 3} and "_meta" not in lean, lean
            info = await session.call_raw("info", {}, 5)
            assert str(info["structuredContent"]["request_id"]).startswith("sb-"), "the lane carried it"
