"""Tool search over Streamable HTTP, per principal, in both eras, and for the official TypeScript SDK
client (SPEC §23, issue 43): two tokens with different policies are shown different servers in the
search tools' descriptions and find different tools for the same query; call_tool of a tool a
policy refuses is TOOL_NOT_ADMITTED, its row naming the real tool and the caller.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.switchboard.audit_helpers import actions
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_http_face import create_token
from tests.switchboard.test_tool_search import SLOW, found, healthy, office
from tests.switchboard.test_ts_client import TS_CALL, run_node

pytestmark = pytest.mark.anyio

QUERY = "email my boss about the delay"


@asynccontextmanager
async def as_token(url: str, token: str, mode: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_principals_find_what_their_policies_admit(tmp_path: Path, mode: str) -> None:
    tokens = tmp_path / "tokens.jsonl"
    ana, bob = (create_token(name, tokens).stdout.strip() for name in ("ana", "bob"))
    config = write_config(
        tmp_path,
        {"office": office("office"), "time": Downstreams.time_server()},
        health=SLOW,
        audit={"db": "gateway.db"},
        auth={"tokens_file": str(tokens), "policies": {"bob": {"allow": ["time.*", "time:*"]}}},
        tool_search={"mode": "search"},
    )
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    url = f"http://127.0.0.1:{port}/mcp"
    seen: dict[str, Any] = {}
    try:
        wait_for_port(port, board)
        for name, token in (("ana", ana), ("bob", bob)):
            async with as_token(url, token, mode) as client:
                if name == "ana":
                    await healthy(client)
                listed = {tool.name: tool for tool in (await client.list_tools()).tools}
                seen[name] = {
                    "listed": sorted(listed),
                    "servers": listed["find_tools"].description,
                    "email": await found(client, QUERY),
                    "time": await found(client, "what time is it in Tokyo"),
                    "sent": await client.call_tool(
                        "call_tool", {"name": "office.list_inbox", "arguments": {"folder": "INBOX"}}
                    ),
                }
    finally:
        assert stop(board) == 0
    assert seen["ana"]["listed"] == seen["bob"]["listed"] == ["call_tool", "find_tools"]
    assert "(office, time)" in seen["ana"]["servers"] and "(time)" in seen["bob"]["servers"]
    assert seen["ana"]["email"][0] == "office.send_email"
    assert not any(name.startswith("office.") for name in seen["bob"]["email"])
    assert "time.get_current_time" in seen["ana"]["time"] and "time.get_current_time" in seen["bob"]["time"]
    assert seen["ana"]["sent"].structured_content == {"tool": "list_inbox", "arguments": {"folder": "INBOX"}}
    refused = seen["bob"]["sent"]
    assert refused.is_error and json.loads(refused.content[0].text)["error"]["code"] == "TOOL_NOT_ADMITTED"
    rows = [(row["tool"], row["principal"], row["outcome"]) for row in actions(tmp_path / "gateway.db")]
    assert ("office.list_inbox", "ana", "ok") in rows and ("office.list_inbox", "bob", "denied") in rows


def test_the_typescript_client_finds_and_calls_through_the_search_tools(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"office": office("office"), "time": Downstreams.time_server()},
        health=SLOW,
        tool_search={"mode": "search", "keep": ["time.convert_time"]},
    )
    mail = {"to": "ana@example.com", "subject": "late", "body": "the train"}
    calls = [
        ["find_tools", {"query": "send an email or read the mail inbox", "limit": 2}],
        ["call_tool", {"name": "office.send_email", "arguments": mail}],
        ["find_tools", {"query": "x", "limit": 21}],
        ["find_tools", {"query": 'NEAR("email" OR boss*) :'}],
    ]
    found_, sent, out_of_range, syntax = (
        json.loads(line) for line in run_node(TS_CALL, config, json.dumps(calls))[-4:]
    )
    tools = found_["structuredContent"]["data"]["tools"]
    assert {tool["name"] for tool in tools} == {"office.send_email", "office.list_inbox"}
    assert all("inputSchema" in tool and "description" in tool for tool in tools)
    assert sent["structuredContent"] == {"tool": "send_email", "arguments": mail}
    error = out_of_range["structuredContent"]["error"]
    assert out_of_range["isError"] and error["code"] == "INVALID_PARAMS" and "1 to 20" in error["message"]
    assert syntax["structuredContent"]["ok"] is True
    assert syntax["structuredContent"]["data"]["tools"][0]["name"] == "office.send_email"


async def test_a_reload_turns_search_on_and_a_bad_section_is_refused_with_its_path(tmp_path: Path) -> None:
    servers = {"office": office("office")}
    config = write_config(tmp_path, servers, health=SLOW)
    port, log_path = free_port(), tmp_path / "board.log"
    with log_path.open("wb") as log_file:
        board = subprocess.Popen(
            switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env(), stderr=log_file
        )
    try:
        wait_for_port(port, board)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
            await wait_for_state(client, "office", "HEALTHY")
            before = [tool.name for tool in (await client.list_tools()).tools]
            write_config(tmp_path, servers, health=SLOW, tool_search={"mode": "all"})
            board.send_signal(signal.SIGHUP)
            with anyio.fail_after(30):
                while "reload refused" not in log_path.read_text():
                    await anyio.sleep(0.05)
            kept = [tool.name for tool in (await client.list_tools()).tools]
            write_config(
                tmp_path, servers, health=SLOW, tool_search={"mode": "search", "keep": ["office.learn"]}
            )
            board.send_signal(signal.SIGHUP)
            with anyio.fail_after(30):
                while (after := [tool.name for tool in (await client.list_tools()).tools]) == kept:
                    await anyio.sleep(0.05)
    finally:
        assert stop(board) == 0
    assert before == kept == sorted(before) and "office.send_email" in before
    assert "tool_search.mode" in log_path.read_text()
    assert after == ["call_tool", "find_tools", "office.learn"]
