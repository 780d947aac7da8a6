"""Hot reload: SIGHUP or --watch applies only the difference; sessions survive; a bad file changes nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.switchboard.helpers import (
    Downstreams,
    Inbox,
    free_port,
    process_gone,
    servers,
    stop,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio

HEALTH = {"liveness_s": 0.2, "readiness_s": 0.5, "check_timeout_s": 2, "restart_backoff_s": 0.2}


async def info(client: Client, server: str) -> dict[str, Any]:
    result = await client.call_tool(f"{server}.info", {})
    assert result.structured_content is not None, result
    return result.structured_content


def rewrite_config(root: Path, servers: dict[str, Any]) -> None:
    """A new config in place, which --watch sees by its (modification time, size): the time is
    moved on by hand when the file system's clock has not ticked since the last write."""
    path = root / "switchboard.json"
    old = path.stat()
    write_config(root, servers, health=HEALTH)
    new = path.stat()
    if new.st_mtime_ns == old.st_mtime_ns:
        os.utime(path, ns=(new.st_atime_ns, old.st_mtime_ns + 1_000_000))


async def wait_for_servers(client: Client, names: set[str], timeout: float = 15.0) -> dict[str, Any]:
    with anyio.fail_after(timeout):
        while True:
            listed = await servers(client)
            if set(listed) == names and all(s["state"] == "HEALTHY" for s in listed.values()):
                return listed
            await anyio.sleep(0.05)


async def test_sighup_applies_the_difference_under_three_live_sessions(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    first = {
        "keep": downstreams.fault("keep"),
        "change": downstreams.fault("change"),
        "gone": downstreams.fault("gone"),
    }
    config = write_config(tmp_path, first, health=HEALTH)
    port = free_port()
    log_path = tmp_path / "board.log"
    with log_path.open("wb") as log_file:
        board = subprocess.Popen(
            switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env(), stderr=log_file
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, board)
        async with Client(url, mode="legacy") as a, Client(url, mode="legacy") as b, Client(url) as c:
            await wait_for_servers(a, {"keep", "change", "gone"})
            for client in (a, b, c):
                await client.call_tool("keep.work", {})
            before = {name: await info(a, name) for name in ("keep", "change", "gone")}
            keep_before = (await servers(a))["keep"]

            second = {
                "keep": first["keep"],
                "change": {**first["change"], "args": [*first["change"]["args"], "--generation=2"]},
                "new": downstreams.fault("new"),
            }
            write_config(tmp_path, second, health=HEALTH)
            board.send_signal(signal.SIGHUP)
            after_servers = await wait_for_servers(b, {"keep", "change", "new"})
            after = {name: await info(c, name) for name in ("keep", "change", "new")}
            answers = [await client.call_tool("new.work", {"from": i}) for i, client in enumerate((a, b, c))]

            config.write_text("{ this is not json")
            board.send_signal(signal.SIGHUP)
            with anyio.fail_after(30):
                while "reload refused" not in log_path.read_text():
                    await anyio.sleep(0.05)
            after_broken = await servers(a)
            survived = [await client.call_tool("keep.work", {}) for client in (a, b, c)]
    finally:
        assert stop(board) == 0
    log = log_path.read_text()

    assert after["keep"]["pid"] == before["keep"]["pid"], "an unchanged server keeps its process"
    assert after["keep"]["calls"] == 3, "and its state"
    keep_after = after_servers["keep"]
    assert keep_after["transitions"] == keep_before["transitions"] and keep_after["restarts"] == 0
    assert after["change"]["pid"] != before["change"]["pid"], "a changed server restarts"
    assert process_gone(before["gone"]["pid"]) and process_gone(before["change"]["pid"])
    assert after["new"]["name"] == "new"
    assert [answer.structured_content["echo"] for answer in answers] == [{"from": i} for i in range(3)]  # type: ignore[index]
    assert set(after_broken) == {"keep", "change", "new"}
    assert all(not answer.is_error for answer in survived)
    assert "reload refused, the running config stays" in log and "invalid JSON" in log


async def test_watch_reloads_when_the_file_changes(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"one": downstreams.fault("one")}, health=HEALTH)
    async with switchboard(config, extra_args=["--watch"]) as client:
        await wait_for_state(client, "one", "HEALTHY")
        pid = (await info(client, "one"))["pid"]
        rewrite_config(tmp_path, {"one": downstreams.fault("one"), "two": downstreams.fault("two")})
        listed = await wait_for_servers(client, {"one", "two"})
        two = await client.call_tool("two.work", {"n": 1})
        same = (await info(client, "one"))["pid"]
    assert listed["two"]["state"] == "HEALTHY"
    assert two.structured_content == {"echo": {"n": 1}, "server": "two", "call": 1}
    assert same == pid
    assert json.loads(config.read_text())["mcpServers"].keys() == {"one", "two"}


# resources/subscribe is deprecated by the 2026 era; the handshake era, which this session speaks, has it.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_restarted_server_is_subscribed_again_for_its_clients(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"r": downstreams.fault("r")}, health=HEALTH)
    inbox = Inbox()
    async with switchboard(config, extra_args=["--watch"], message_handler=inbox.message) as client:
        await wait_for_state(client, "r", "HEALTHY")
        await client.subscribe_resource("fault://r/status")
        await client.call_tool("r.touch", {})
        await inbox.wait_for(lambda: updates(inbox) == 1)
        pid = (await info(client, "r"))["pid"]
        rewrite_config(tmp_path, {"r": downstreams.fault("r", tool_timeouts={"work": 5})})
        with anyio.fail_after(15):
            while True:
                answer = await client.call_tool("r.info", {})
                if not answer.is_error and (answer.structured_content or {}).get("pid") not in (None, pid):
                    break
                await anyio.sleep(0.05)
        await wait_for_servers(client, {"r"})
        await client.call_tool("r.touch", {})
        with anyio.fail_after(10):
            await inbox.wait_for(lambda: updates(inbox) == 2)
    assert updates(inbox) == 2, "the new process of a changed server was subscribed again"


def updates(inbox: Inbox) -> int:
    return sum(isinstance(n, types.ResourceUpdatedNotification) for n in inbox.notifications)


async def test_a_call_in_flight_on_a_removed_server_is_answered_at_once(tmp_path: Path) -> None:
    # The process is stopped by the switchboard, not by itself: the call must not wait for its timeout.
    downstreams = Downstreams(tmp_path)
    stuck = downstreams.fault("stuck", "timeout", tool_timeouts={"work": 60})
    config = write_config(tmp_path, {"stuck": stuck, "other": downstreams.fault("other")}, health=HEALTH)
    async with switchboard(config, extra_args=["--watch"]) as client:
        await wait_for_state(client, "stuck", "HEALTHY")
        answers: list[types.CallToolResult] = []

        async def call() -> None:
            answers.append(await client.call_tool("stuck.work", {"n": 1}))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call)
            with anyio.fail_after(10):
                while downstreams.calls("stuck") < 1:
                    await anyio.sleep(0.05)
            rewrite_config(tmp_path, {"other": downstreams.fault("other")})
            started = time.monotonic()
            with anyio.fail_after(45):
                while not answers:
                    await anyio.sleep(0.05)
            waited = time.monotonic() - started
        listed = await wait_for_servers(client, {"other"})
    assert waited < 30, f"the call waited {waited:.1f} s, as if for its 60 s timeout"
    assert answers[0].is_error and answers[0].structured_content is not None
    error = answers[0].structured_content["error"]
    assert error["code"] == "UPSTREAM_ERROR" and "it may have acted" in error["message"], error
    assert set(listed) == {"other"}
