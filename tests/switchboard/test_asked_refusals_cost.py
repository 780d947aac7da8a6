"""A request no server can take costs its caller as an unknown tool does (SPEC §21), through a real
switchboard over stdio, a fault server and its audit store: an unknown resource, an unknown or
1 MB prompt name and an unknown template take from the principal's rate limit (they took nothing),
so once over, they and the requests after them are RATE_LIMITED, each recorded in a small row."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.switchboard.audit_helpers import calls
from tests.switchboard.helpers import FAST, Downstreams, switchboard, wait_for_state, write_config

pytestmark = pytest.mark.anyio

LONG_PROMPT = "f1." + "x" * 1_000_000


def _named(name: str) -> str:
    return f"<name of {len(name)} chars, sha256 {hashlib.sha256(name.encode()).hexdigest()[:16]}>"


async def _refusal(request: Any) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await request
    return refused.value


async def test_requests_no_server_can_take_cost_the_principal_its_rate_limit(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {"f1": downstreams.fault("f1")},
        health=FAST,
        rate_limits={"per_token": {"calls_per_minute": 1, "burst": 4}},
        audit={"db": "gateway.db"},
    )
    template = types.ResourceTemplateReference(uri="fault://nowhere/{id}")
    async with switchboard(config) as client:
        await wait_for_state(client, "f1", "HEALTHY")
        # Four refusals take the burst: an unknown resource, prompt, 1 MB prompt name and template.
        refused = [
            await _refusal(client.read_resource("fault://nowhere")),
            await _refusal(client.get_prompt("f1.nope")),
            await _refusal(client.get_prompt(LONG_PROMPT)),
            await _refusal(client.complete(template, {"name": "id", "value": "1"})),
        ]
        # Then the same requests, and one the server would answer, are over the token's limit.
        limited = [
            await _refusal(client.read_resource("fault://nowhere")),
            await _refusal(client.get_prompt(LONG_PROMPT)),
            await _refusal(client.read_resource("fault://f1/status")),
        ]

    messages = [error.error.message for error in refused]
    assert messages[0].startswith("resource not found: fault://nowhere;"), messages
    assert messages[1].startswith("unknown prompt 'f1.nope';"), messages
    assert messages[2].startswith(f"unknown prompt {_named(LONG_PROMPT)};"), messages
    assert "no routable server offers the resource template 'fault://nowhere/{id}'" in messages[3]
    assert all(len(message) < 400 for message in messages), messages
    for error in limited:
        assert error.error.message.startswith("RATE_LIMITED: "), error.error.message
        assert isinstance(error.error.data, dict) and error.error.data["retry_after_s"] > 0
    assert downstreams.calls("f1") == 0  # nothing reached the server

    rows = calls(tmp_path / "gateway.db")
    assert [(row["tool"], row["outcome"]) for row in rows] == [
        ("?:resources/read", "denied"),
        ("?:prompts/get", "denied"),
        ("?:prompts/get", "denied"),
        ("?:completion/complete", "denied"),
        ("?:resources/read", "denied"),
        ("?:prompts/get", "denied"),
        ("f1:resources/read", "denied"),
    ]
    # Every refusal says why (SPEC §21): nothing offers what was asked, as an unknown tool.
    assert [row["reason"] for row in rows] == ["unknown_tool"] * 4 + ["rate_limit"] * 3
    assert rows[0]["reason_message"].startswith("resource not found: fault://nowhere;")
    for row in rows:
        assert sum(len(str(value)) for value in row.values()) < 1000, row
