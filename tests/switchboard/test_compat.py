"""Configs written for other clients load; secrets come from the environment; tools can be filtered."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import parse
from tests.helpers import chain_error
from tests.switchboard.helpers import (
    Downstreams,
    call,
    free_port,
    servers,
    stop,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_http import start_remote

pytestmark = pytest.mark.anyio

CLAUDE_DESKTOP_STYLE = {
    "mcpServers": {
        "files": {
            "type": "stdio",
            "command": "${TOOL_HOME:-/usr/local}/bin/files",
            "args": ["--root", "${PROJECT}"],
            "env": {"API_KEY": "${API_KEY}"},
            "timeout": 2500,
            "autoApprove": ["read"],
            "alwaysAllow": ["list"],
            "description": "files of the project",
        },
        "remote": {
            "type": "streamable-http",
            "url": "https://${HOST}/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}"},
        },
        "events": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        "old": {"command": "old-server", "disabled": True},
    },
    "fallbacks": {"read": ["old.read", "files.read"]},
}
ENVIRON = {"PROJECT": "/src/p", "API_KEY": "k-1", "HOST": "mcp.example", "TOKEN": "t-2"}


def test_a_config_from_another_client_loads_with_variables_expanded() -> None:
    config = parse(json.dumps(CLAUDE_DESKTOP_STYLE), ENVIRON)
    files, remote, events, old = config.servers
    assert files.command == "/usr/local/bin/files" and files.args == ("--root", "/src/p")
    assert files.env == {"API_KEY": "k-1"}
    assert files.health.call_timeout_s == 2.5
    assert remote.url == "https://mcp.example/mcp" and remote.transport == "http"
    assert remote.headers == {"Authorization": "Bearer t-2"}
    assert events.transport == "sse"
    assert old.disabled and [spec.name for spec in config.enabled] == ["files", "remote", "events"]
    assert [str(target) for target in config.fallbacks["read"]] == ["files.read"]


def test_an_unset_variable_without_default_names_it_and_its_path() -> None:
    with pytest.raises(ConfigError) as refused:
        parse(json.dumps(CLAUDE_DESKTOP_STYLE), {k: v for k, v in ENVIRON.items() if k != "TOKEN"})
    assert refused.value.path == "mcpServers.remote.headers.Authorization"
    assert "environment variable TOKEN is not set" in refused.value.message


def test_an_unset_variable_exits_2_naming_it(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"s": {"command": "x", "args": ["${COLIBRI_TEST_SURELY_UNSET_VAR}"]}})
    finished = subprocess.run(
        switchboard_command(config),
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert finished.returncode == 2
    assert finished.stdout == ""
    assert "mcpServers.s.args[0]" in finished.stderr and "COLIBRI_TEST_SURELY_UNSET_VAR" in finished.stderr
    assert len(finished.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("entry", "path", "hint"),
    [
        ({"command": "x", "timout": 5}, "mcpServers.s", "did you mean 'timeout'?"),
        ({"command": "x", "header": {}}, "mcpServers.s", "did you mean 'headers'?"),
        ({"command": "x", "tools": {"alow": ["a*"]}}, "mcpServers.s.tools", "did you mean 'allow'?"),
    ],
)
def test_unknown_keys_are_refused_with_a_suggestion(entry: dict[str, object], path: str, hint: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse(json.dumps({"mcpServers": {"s": entry}}))
    assert refused.value.path == path and hint in refused.value.message


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        ({"command": "x", "tools": {"allow": ["a"], "deny": ["b"]}}, "mcpServers.s.tools"),
        ({"command": "x", "timeout": 10, "health": {"call_timeout_s": 1}}, "mcpServers.s.timeout"),
        ({"command": "x", "type": "http"}, "mcpServers.s.type"),
        ({"command": "x", "headers": {"a": "b"}}, "mcpServers.s.headers"),
        ({"command": "x", "tool_timeouts": {"t": 0}}, "mcpServers.s.tool_timeouts.t"),
    ],
)
def test_contradictions_are_refused(entry: dict[str, object], path: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse(json.dumps({"mcpServers": {"s": entry}}))
    assert refused.value.path == path


async def test_headers_reach_an_http_downstream_and_disabled_servers_never_start(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    port = free_port()
    remote = start_remote(downstreams, port)
    try:
        wait_for_port(port, remote)
        config = write_config(
            tmp_path,
            {
                "remote": {
                    "type": "http",
                    "url": f"http://127.0.0.1:{port}/mcp",
                    "headers": {"Authorization": "Bearer ${COLIBRI_TEST_TOKEN}"},
                    "timeout": 4000,
                },
                "off": {**downstreams.fault("off"), "disabled": True},
            },
            health={"liveness_s": 0.2, "readiness_s": 0.5},
        )
        async with switchboard(config, env={"COLIBRI_TEST_TOKEN": "s3cret"}) as client:
            await wait_for_state(client, "remote", "HEALTHY")
            info = await client.call_tool("remote.info", {})
            listed = await servers(client)
    finally:
        stop(remote)
    assert info.structured_content is not None
    assert info.structured_content["authorization"] == "Bearer s3cret"
    assert set(listed) == {"remote"}
    assert downstreams.calls("off") == 0


async def test_a_filtered_tool_is_neither_listed_nor_callable(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {
            "denied": downstreams.fault("denied", tools={"deny": ["work", "set_*", "touch"]}),
            "allowed": downstreams.fault("allowed", tools={"allow": ["w*"]}, tool_timeouts={"work": 0.3}),
        },
        health={"liveness_s": 0.2, "readiness_s": 0.5},
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "denied", "HEALTHY")
        await wait_for_state(client, "allowed", "HEALTHY")
        names = {tool.name for tool in (await client.list_tools()).tools}
        denied = chain_error(await call(client, "denied.work", {}))
        hidden = chain_error(await call(client, "allowed.info", {}))
        downstreams.set_mode("allowed", "slow", delay_s=1.0)
        slow = chain_error(await call(client, "allowed.work", {}))
    assert names == {"switchboard_status", "denied.info", "allowed.work"}
    assert denied["code"] == "UNKNOWN_TOOL" and hidden["code"] == "UNKNOWN_TOOL"
    assert downstreams.calls("denied") == 0
    # The per-tool timeout (0.3 s) wins over the call timeout (30 s by default).
    assert slow["code"] == "UPSTREAM_TIMEOUT" and "0.3 s" in slow["message"]
