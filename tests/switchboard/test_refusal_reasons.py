"""Every refusal says why (SPEC §21): a real switchboard over HTTP with a tokens file records each
refused call's `reason` and one-line `reason_message` in its audit row — a policy's (`policy:ci`),
an unknown tool's, a rate limit's and an unavailable server's — and a call that was not refused
has none.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.switchboard.audit_helpers import calls
from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    free_port,
    own_answer,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_http_face import create_token, http_client

pytestmark = pytest.mark.anyio


async def test_each_refusal_row_names_its_reason_and_message(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    tokens_file = tmp_path / "tokens.jsonl"
    alice, ci = (create_token(name, tokens_file).stdout.strip() for name in ("alice", "ci"))
    config = write_config(
        tmp_path,
        {
            "echo": downstreams.fault("echo"),
            "dead": {"command": str(tmp_path / "no-such-program")},
        },
        health=FAST,
        auth={"tokens_file": str(tokens_file), "policies": {"ci": {"deny": ["echo.info"]}}},
        rate_limits={"per_tool": {"echo.work": {"calls_per_minute": 1}}},
        audit={"db": "audit/gateway.db"},
    )
    store = tmp_path / "audit" / "gateway.db"
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, board)
        async with http_client(url, alice) as as_alice, http_client(url, ci) as as_ci:
            await wait_for_state(as_alice, "echo", "HEALTHY")
            answers = [
                await as_ci.call_tool("echo.info", {}),
                await as_alice.call_tool("echo.nope", {}),
                await as_alice.call_tool("echo.work", {"value": 1}),
                await as_alice.call_tool("echo.work", {"value": 2}),
                await as_alice.call_tool("dead.anything", {}),
            ]
    finally:
        assert stop(board) == 0

    codes = [own_answer(answer)["error"]["code"] for i, answer in enumerate(answers) if i != 2]
    assert codes == ["TOOL_NOT_ADMITTED", "UNKNOWN_TOOL", "RATE_LIMITED", "SERVICE_UNAVAILABLE"]
    rows = calls(store)
    seen = [(row["tool"], row["outcome"], row["reason"]) for row in rows]
    assert seen[:4] == [
        ("echo.info", "denied", "policy:ci"),
        ("echo.nope", "denied", "unknown_tool"),
        ("echo.work", "ok", None),
        ("echo.work", "denied", "rate_limit"),
    ]
    assert seen[4][:2] == ("dead.anything", "unavailable")
    assert seen[4][2] in ("unavailable:starting", "unavailable:unhealthy")
    messages = [row["reason_message"] for row in rows]
    assert messages[2] is None
    assert "auth.policies.ci" in messages[0] and "'echo.nope'" in messages[1]
    assert "rate_limits.per_tool" in messages[3] and "dead.anything is unavailable" in messages[4]
    assert all(message is None or "\n" not in message for message in messages)
