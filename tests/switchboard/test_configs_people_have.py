"""Configs people have load whole, and secrets stay secret (SPEC §14).

Claude Desktop keeps `globalShortcut` and `preferences` beside `mcpServers`; Cursor reads an entry's
`envFile`. The switchboard serves such a file as it is (one warning for the keys it does not read),
still refuses a near miss of its own keys, and never repeats a value the environment or an envFile
put into an entry: status, `/status` and its logs name the entry and the kind of failure.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import parse
from tests.switchboard.helpers import (
    Downstreams,
    RawSwitchboard,
    call,
    free_port,
    servers,
    stop,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
)

pytestmark = pytest.mark.anyio

SECRET = "s3cr3t-path-4711"


def _claude_desktop_file(root: Path, servers: dict[str, Any]) -> Path:
    path = root / "claude_desktop_config.json"
    path.write_text(
        json.dumps(
            {
                "globalShortcut": "Ctrl+Space",
                "preferences": {"quickEntryShortcut": "off", "menuBarEnabled": False},
                "mcpServers": servers,
            },
            indent=2,
        )
    )
    return path


def test_a_claude_desktop_file_is_served_with_one_warning_for_its_own_keys(tmp_path: Path) -> None:
    config = _claude_desktop_file(tmp_path, {"a": Downstreams(tmp_path).fault("a")})
    board = RawSwitchboard(config, switchboard_env())
    board.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )
    board.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    listed = board.request("tools/list")["result"]["tools"]
    assert "a.work" in {tool["name"] for tool in listed}
    _, stderr = board.finish()  # closes its stdin: the end of the session
    warnings = [line for line in stderr.decode().splitlines() if "ignoring top-level key" in line]
    assert len(warnings) == 1 and "'globalShortcut'" in warnings[0] and "'preferences'" in warnings[0]


@pytest.mark.parametrize(("key", "meant"), [("fallback", "fallbacks"), ("helth", "health"), ("auht", "auth")])
def test_a_near_miss_of_the_switchboards_own_keys_is_still_refused(key: str, meant: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse(json.dumps({"mcpServers": {"s": {"command": "x"}}, key: {}}))
    assert refused.value.path == "$" and f"did you mean {meant!r}?" in refused.value.message


def test_keys_inside_entries_are_still_checked_in_a_file_with_foreign_keys() -> None:
    with pytest.raises(ConfigError) as refused:
        parse(json.dumps({"globalShortcut": "x", "mcpServers": {"s": {"command": "x", "envfile": "e"}}}))
    assert refused.value.path == "mcpServers.s" and "did you mean 'envFile'?" in refused.value.message


async def test_an_env_file_beside_the_config_sets_the_servers_environment(tmp_path: Path) -> None:
    """`a` takes FAULT_NAME from its envFile (the downstream names itself by it); `b`'s own `env`
    wins over the same file."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "servers.env").write_text("# the servers' secrets\nFAULT_NAME=from-env-file\n")
    downstreams = Downstreams(tmp_path)
    a = downstreams.fault("a", envFile="servers.env")
    del a["env"]["FAULT_NAME"]
    b = downstreams.fault("b", envFile="servers.env")
    config = tmp_path / "conf" / "switchboard.json"
    config.write_text(json.dumps({"mcpServers": {"a": a, "b": b}}))
    async with switchboard(config) as client:
        await wait_for_state(client, "a", "HEALTHY")
        await wait_for_state(client, "b", "HEALTHY")
        named = {name: server["server_name"] for name, server in (await servers(client)).items()}
    assert named == {"a": "from-env-file", "b": "b"}


def test_a_missing_env_file_exits_2_naming_the_entry(tmp_path: Path) -> None:
    config = tmp_path / "switchboard.json"
    config.write_text(json.dumps({"mcpServers": {"s": {"command": "x", "envFile": "nope.env"}}}))
    done = subprocess.run(
        switchboard_command(config),
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "mcpServers.s.envFile" in done.stderr and "nope.env" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


async def test_status_and_logs_never_repeat_an_expanded_secret(tmp_path: Path) -> None:
    """A command built from `${SECRET_HOME}` that cannot start: the trial saw the expanded path in
    `switchboard_status` and `/status`. Now they say which entry and `cannot start: no such file or
    directory`; neither they nor the log lines (at debug) hold the value."""
    entry = {"command": "${SECRET_HOME}/bin/tool", "args": ["--token", "${SECRET_TOKEN}"]}
    config = tmp_path / "switchboard.json"
    config.write_text(json.dumps({"mcpServers": {"tool": entry}}))
    env = {
        **switchboard_env(),
        "SECRET_HOME": f"/opt/{SECRET}",
        "SECRET_TOKEN": f"tok-{SECRET}",
        "COLIBRI_LOG_LEVEL": "debug",
    }
    port = free_port()
    log = tmp_path / "switchboard.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            switchboard_command(config, "--http", f"127.0.0.1:{port}", "--no-auth"),
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, process)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
            status = await _failed(client, "tool")
            reported = json.dumps(await call(client, "switchboard_status"))
        page = httpx2.get(f"http://127.0.0.1:{port}/status", timeout=10).text
    finally:
        stop(process)
    assert "cannot start: no such file or directory" in json.dumps(status["last_failure"])
    assert "cannot start: no such file or directory" in page
    for said in (reported, page, log.read_text()):
        assert SECRET not in said


async def _failed(client: Client, name: str, timeout: float = 20.0) -> dict[str, Any]:
    """`name`'s status once it has recorded a failure."""
    deadline = time.monotonic() + timeout
    while True:
        server = (await servers(client))[name]
        if server["last_failure"] is not None:
            return server
        assert time.monotonic() < deadline, f"{name} never recorded a failure: {server}"
        await anyio.sleep(0.05)
