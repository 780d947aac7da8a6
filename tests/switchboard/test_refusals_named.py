"""A refusal names what was asked as a person may safely read it (SPEC §21), through a real
switchboard over stdio and fault servers: TOOL_NOT_ADMITTED for a resources/read shows the URI
escaped (bidi overrides, CR/LF) and, past 256 characters, by its length and digest (a long URI was
shown whole)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from tests.switchboard.helpers import FAST, Downstreams, switchboard, wait_for_state, write_config

pytestmark = pytest.mark.anyio

HOSTILE_URI = "fault://f1/\u202etxt.exe\r\nforged: ok"
LONG_URI = "fault://f2/" + "x" * 300


def _named(name: str) -> str:
    return f"<name of {len(name)} chars, sha256 {hashlib.sha256(name.encode()).hexdigest()[:16]}>"


async def _refusal(request: Any) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await request
    return refused.value


async def test_a_refused_read_names_its_uri_escaped_and_a_long_one_by_its_digest(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    servers = {"f1": downstreams.fault("f1"), "f2": downstreams.fault("f2")}
    servers["f1"]["env"]["FAULT_URI"] = HOSTILE_URI  # the one resource each fault server offers
    servers["f2"]["env"]["FAULT_URI"] = LONG_URI
    policy = {"deny": ["f1:resources/read", "f2:resources/read"]}
    config = write_config(
        tmp_path,
        servers,
        health=FAST,
        auth={"tokens_file": str(tmp_path / "tokens.jsonl"), "policies": {"local": policy}},
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "f1", "HEALTHY")
        await wait_for_state(client, "f2", "HEALTHY")
        hostile = await _refusal(client.read_resource(HOSTILE_URI))
        long = await _refusal(client.read_resource(LONG_URI))

    message = hostile.error.message
    assert message.startswith(
        "TOOL_NOT_ADMITTED: resources/read of 'fault://f1/\\u202etxt.exe\\r\\nforged: ok' is not admitted"
    ), message
    assert not any(char in message for char in "\u202e\r\n")
    assert long.error.message.startswith(
        f"TOOL_NOT_ADMITTED: resources/read of {_named(LONG_URI)} is not admitted for the token 'local'"
    ), long.error.message
    assert "x" * 257 not in long.error.message
