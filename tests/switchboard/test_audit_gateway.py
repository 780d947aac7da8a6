"""The audited gateway end to end (SPEC §15): a real switchboard over HTTP with a tokens file, in front
of a real `colibri serve` and a fault server, recording into its audit store.

Calls by two tokens become rows naming each token, `server.tool`, the outcome and the digests of the
arguments and the answer; a policy hides tools from one token and refuses its calls; the sixth call
in a minute under a limit of 5 is refused with `retry_after_s`; refusals are rows too. After the
switchboard stops, the store passes `colibri verify --db` and `verify --checkpoint`, and a raw edit
of one row makes both fail, naming that row's log index.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import clean_env
from tests.switchboard.audit_helpers import (
    actions,
    answer_digest,
    arguments_column,
    calls,
    checkpoint_and_key,
    verify,
)
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


async def test_two_tokens_a_policy_and_a_rate_limit_in_a_store_that_verifies(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    tokens_file = tmp_path / "tokens.jsonl"
    alice, ci = (create_token(name, tokens_file).stdout.strip() for name in ("alice", "ci"))
    config = write_config(
        tmp_path,
        {"colibri": downstreams.colibri(), "echo": downstreams.fault("echo")},
        health=FAST,
        auth={"tokens_file": str(tokens_file), "policies": {"ci": {"deny": ["colibri.*"]}}},
        rate_limits={"per_tool": {"echo.work": {"calls_per_minute": 5}}},
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
            await wait_for_state(as_alice, "colibri", "HEALTHY")
            await wait_for_state(as_alice, "echo", "HEALTHY")
            alice_tools = {tool.name for tool in (await as_alice.list_tools()).tools}
            ci_tools = {tool.name for tool in (await as_ci.list_tools()).tools}
            created = await as_alice.call_tool("colibri.task_create", {"title": "audited"})
            refused = own_answer(await as_ci.call_tool("colibri.task_list", {}))
            worked = [await as_ci.call_tool("echo.work", {"value": "ci"})]
            worked += [await as_alice.call_tool("echo.work", {"value": n}) for n in range(4)]
            limited = own_answer(await as_alice.call_tool("echo.work", {"value": "sixth"}))
    finally:
        assert stop(board) == 0

    assert "colibri.task_create" in alice_tools and "echo.work" in alice_tools
    assert not any(name.startswith("colibri.") for name in ci_tools) and "echo.work" in ci_tools
    assert not created.is_error and not any(result.is_error for result in worked)
    assert refused["error"]["code"] == "TOOL_NOT_ADMITTED"
    assert (
        "auth.policies.ci" in refused["error"]["message"] and refused["error"]["details"]["principal"] == "ci"
    )
    assert limited["error"]["code"] == "RATE_LIMITED"
    assert 0 < limited["error"]["details"]["retry_after_s"] <= 12

    rows = calls(store)
    seen = [(row["principal"], row["tool"], row["outcome"]) for row in rows]
    assert seen == [
        ("alice", "colibri.task_create", "ok"),
        ("ci", "colibri.task_list", "denied"),
        ("ci", "echo.work", "ok"),
        *[("alice", "echo.work", "ok")] * 4,
        ("alice", "echo.work", "denied"),
    ]
    answered = created.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert rows[0]["arguments"] == arguments_column({"title": "audited"})
    assert rows[0]["result_hash"] == answer_digest(answered)
    assert "audited" not in json.dumps(rows)  # digests, never the arguments themselves
    assert all(row["log_index"] is not None and row["duration_ms"] >= 0 for row in rows)
    assert len({row["correlation_id"] for row in rows}) == len(rows)
    # The switchboard's own events: each tool pinned once, the first time it was listed.
    pinned = Counter(row["tool"] for row in actions(store) if row["tool"].startswith("switchboard:"))
    assert pinned == {"switchboard:pins/pin": len(alice_tools) - 1}
    _verifies_until_a_row_is_edited(store, tmp_path, rows[1])


def _verifies_until_a_row_is_edited(store: Path, tmp_path: Path, edited: dict[str, Any]) -> None:
    env = clean_env(tmp_path)
    assert verify(store, env)[0] == 0
    checkpoint, key = checkpoint_and_key(store, env, tmp_path)
    assert verify(store, env, "--checkpoint", str(checkpoint), "--key", key)[0] == 0

    with sqlite3.connect(store) as conn:
        conn.execute("UPDATE actions SET outcome = 'ok' WHERE sequence_no = ?", (edited["sequence_no"],))
    conn.close()
    for extra in ((), ("--checkpoint", str(checkpoint), "--key", key)):
        code, said = verify(store, env, *extra)
        assert code == 1, said
        assert f"entry index {edited['log_index']}" in said
