"""The switchboard as an MCP server: change notifications, a clean stdout, shutdown, the status command."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types import ToolListChangedNotification

from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    RawSwitchboard,
    process_gone,
    switchboard,
    switchboard_env,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio


def two_faults(tmp_path: Path) -> tuple[Downstreams, Path]:
    downstreams = Downstreams(tmp_path)
    health = {**FAST, "liveness_s": 30, "readiness_s": 30, "cooldown_s": 30}
    config = write_config(tmp_path, {"a": downstreams.fault("a"), "b": downstreams.fault("b")}, health=health)
    return downstreams, config


async def quarantine_a(client: Client, downstreams: Downstreams) -> None:
    downstreams.set_mode("a", "fail")
    for _ in range(3):
        with pytest.raises(MCPError):
            await client.call_tool("a.work", {})


async def test_tools_list_changed_reaches_handshake_era_clients(tmp_path: Path) -> None:
    downstreams, config = two_faults(tmp_path)
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed.set()

    async with switchboard(config, message_handler=on_message) as client:
        await wait_for_state(client, "a", "HEALTHY")
        await wait_for_state(client, "b", "HEALTHY")
        before = {tool.name for tool in (await client.list_tools()).tools}
        changed = anyio.Event()
        await quarantine_a(client, downstreams)
        with anyio.fail_after(5):
            await changed.wait()
        after = {tool.name for tool in (await client.list_tools()).tools}
    assert {"a.work", "b.work"} <= before
    assert before - after == {"a.work", "a.info", "a.set_mode", "a.touch"}


async def test_tools_list_changed_reaches_2026_clients_through_listen(tmp_path: Path) -> None:
    downstreams, config = two_faults(tmp_path)
    async with switchboard(config, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        await wait_for_state(client, "a", "HEALTHY")
        await wait_for_state(client, "b", "HEALTHY")
        async with client.listen(tools_list_changed=True) as events:
            await quarantine_a(client, downstreams)
            with anyio.fail_after(5):
                event = await events.__anext__()
        after = {tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools}
    assert isinstance(event, ToolsListChanged)
    assert "a.work" not in after and "b.work" in after


def test_stdout_carries_only_json_rpc_and_sigterm_stops_everything(tmp_path: Path) -> None:
    _, config = two_faults(tmp_path)
    board = RawSwitchboard(config, {**switchboard_env(), "COLIBRI_LOG_LEVEL": "debug"})
    client = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    assert board.request("initialize", client)["result"]["serverInfo"]["name"] == "colibri-switchboard"
    board.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    deadline = time.monotonic() + 15
    while True:
        status = board.request("tools/call", {"name": "switchboard_status", "arguments": {}})
        states = [server["state"] for server in status["result"]["structuredContent"]["data"]["servers"]]
        if states == ["HEALTHY", "HEALTHY"]:
            break
        assert time.monotonic() < deadline, states
        time.sleep(0.05)
    listed = board.request("tools/list")
    answered = board.request("tools/call", {"name": "a.work", "arguments": {"x": 1}})
    info = board.request("tools/call", {"name": "a.info", "arguments": {}})
    unknown = board.request("tools/call", {"name": "nope", "arguments": {}})
    not_an_object = board.request("tools/call", {"name": "a.work", "arguments": "not an object"})
    a_pid = info["result"]["structuredContent"]["pid"]
    board.process.send_signal(signal.SIGTERM)
    lines, stderr = board.finish()

    assert board.process.returncode == 0
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in lines), "stdout carries JSON-RPC only"
    assert any(json.loads(line).get("method") == "notifications/tools/list_changed" for line in lines)
    assert "a.work" in {tool["name"] for tool in listed["result"]["tools"]}
    assert answered["result"]["structuredContent"] == {"echo": {"x": 1}, "server": "a", "call": 1}
    assert unknown["result"]["isError"] is True
    refused = not_an_object["result"]
    assert refused["isError"] is True and refused["structuredContent"]["error"]["code"] == "INVALID_PARAMS"
    assert b"colibri.switchboard" in stderr, "logs go to stderr"
    deadline = time.monotonic() + 5
    while not process_gone(a_pid):
        assert time.monotonic() < deadline, "the downstream outlived the switchboard"
        time.sleep(0.05)


# The MCP shutdown sequence as the SDK clients run it: close the server's stdin, wait 2 s, SIGTERM,
# wait 2 s, SIGKILL. A switchboard killed before it stopped its downstreams leaves them running.
CLIENT_GRACE_S = 2.0


@pytest.mark.serial
def test_closing_stdin_stops_a_downstream_that_outlives_its_input_within_the_clients_grace(
    tmp_path: Path,
) -> None:
    downstreams = Downstreams(tmp_path)
    lingering = downstreams.fault("a")
    lingering["env"]["FAULT_LINGER"] = "1"  # alive after its stdin ends, as server-everything is
    board = RawSwitchboard(write_config(tmp_path, {"a": lingering}, health=FAST), switchboard_env())
    client = {"name": "t", "version": "1"}
    board.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client})
    board.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    info = board.request("tools/call", {"name": "a.info", "arguments": {}})
    pid = info["result"]["structuredContent"]["pid"]

    started = time.monotonic()
    board.finish(timeout=20)  # closes the switchboard's stdin first, as a client that stops does
    took = time.monotonic() - started

    assert process_gone(pid), "the downstream outlived the switchboard"
    assert took < CLIENT_GRACE_S, f"the switchboard took {took:.2f} s to stop: its client would signal it"


# A server that answers `initialize` and exits once told `initialized`: its connection is lost.
_GONE_AFTER_THE_HANDSHAKE = """
import json, sys
asked = json.loads(sys.stdin.readline())
result = {"protocolVersion": asked["params"]["protocolVersion"], "capabilities": {"tools": {}},
          "serverInfo": {"name": "gone", "version": "1"}}
print(json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": result}), flush=True)
sys.stdin.readline()
"""


def test_status_command_checks_once_and_prints_a_table(tmp_path: Path) -> None:
    """The table is the whole of stdout and carries each failure's reason, with counters that
    agree; stderr holds the warnings alone: no INFO line, nothing a downstream wrote."""
    downstreams = Downstreams(tmp_path)
    noisy_dead = {
        "command": sys.executable,
        "args": ["-c", "import sys; sys.stderr.write('downstream noise\\n'); raise SystemExit(1)"],
    }
    config = write_config(
        tmp_path,
        {
            "colibri": downstreams.colibri(),
            "time": downstreams.time_server(),
            "dead": noisy_dead,
        },
        health=FAST,
    )
    command = [sys.executable, "-m", "colibri", "switchboard", "status", "--config", str(config)]
    env = {**switchboard_env(), "COLIBRI_LOG_LEVEL": "info"}  # asked for info: the table still wins
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, check=False)

    assert done.returncode == 1, "a server that is not HEALTHY fails the status command"
    header, *rows = done.stdout.splitlines()
    assert header.split() == [
        "SERVER",
        "STATE",
        "LIVENESS",
        "READINESS",
        "CAPABILITY",
        "FAILURES",
        "COOLDOWN",
        "LEFT",
        "LAST",
        "FAILURE",
    ]
    assert len(rows) == 3, done.stdout
    table = {row.split()[0]: row for row in rows}
    assert table["colibri"].split()[1:3] == ["HEALTHY", "ok"]
    assert table["time"].split()[1] == "HEALTHY"
    assert "0 in a row, 0 total" in table["colibri"] and table["colibri"].endswith(" -")
    assert table["dead"].split()[1] == "UNHEALTHY"
    counts = re.search(r"(\d+) in a row, (\d+) total", table["dead"])  # every failure is in the streak
    assert counts is not None and int(counts[1]) >= 1 and counts[1] == counts[2], table["dead"]
    assert table["dead"].endswith("failed connection: handshake failed: Connection closed"), table["dead"]
    assert "downstream noise" not in done.stderr and " INFO " not in done.stderr, done.stderr
    assert "WARNING colibri.switchboard: dead: STARTING -> UNHEALTHY" in done.stderr, done.stderr


async def test_a_lost_connection_counts_in_the_total_as_in_the_streak(tmp_path: Path) -> None:
    """The status table's total (calls, checks, connections) must never fall below the streak."""
    gone = {"command": sys.executable, "args": ["-c", _GONE_AFTER_THE_HANDSHAKE]}
    config = write_config(tmp_path, {"gone": gone}, health={**FAST, "failures_to_quarantine": 2})
    async with switchboard(config) as client:
        server = await wait_for_state(client, "gone", "QUARANTINE")
    assert server["last_failure"].startswith("lost connection: "), server
    failures = server["failures"]
    assert failures["consecutive"] >= 2
    assert failures["calls"] + failures["checks"] + failures["connects"] >= failures["consecutive"], failures
