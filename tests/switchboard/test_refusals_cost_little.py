"""Refusals cost little (SPEC §21), through a real switchboard and its audit store.

- 40 calls named "nope" + "x" * 1_000_000 by one token: refused UNKNOWN_TOOL until the token's
  limit, then RATE_LIMITED; each recorded in a row under 1 kB that names the call by its length
  and digest, never the name; the store stays small.
- A `per_tool` limit counts every call that reaches the tool: a fallback capability `cap` →
  `echo.work` is refused once `echo.work`'s limit is spent, and a glob key (`"echo.i*"`) limits
  the tools it matches.
"""

from __future__ import annotations

import hashlib
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
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_http_face import create_token, http_client

pytestmark = pytest.mark.anyio

LONG = "nope" + "x" * 1_000_000


async def test_megabyte_names_are_refused_rate_limited_and_recorded_by_their_digest(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    tokens_file = tmp_path / "tokens.jsonl"
    reader = create_token("reader", tokens_file).stdout.strip()
    config = write_config(
        tmp_path,
        {"echo": downstreams.fault("echo")},
        health=FAST,
        auth={"tokens_file": str(tokens_file)},
        rate_limits={"per_token": {"calls_per_minute": 10, "burst": 10}},
        audit={"db": "audit/gateway.db"},
    )
    store = tmp_path / "audit" / "gateway.db"
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, board)
        async with http_client(f"http://127.0.0.1:{port}/mcp", reader) as client:
            await wait_for_state(client, "echo", "HEALTHY")
            answers = [own_answer(await client.call_tool(LONG, {})) for _ in range(40)]
    finally:
        assert stop(board) == 0

    codes = [answer["error"]["code"] for answer in answers]
    # wait_for_state's switchboard_status calls are not refusals: the ten first long names are
    # answered UNKNOWN_TOOL, and every one after them is over the token's limit.
    assert codes == ["UNKNOWN_TOOL"] * 10 + ["RATE_LIMITED"] * 30
    digest = hashlib.sha256(LONG.encode()).hexdigest()[:16]
    named = f"<name of {len(LONG)} chars, sha256 {digest}>"
    assert all(len(str(answer)) < 1000 for answer in answers)  # the answer does not echo the name
    assert answers[0]["error"]["details"]["tool"] == named

    rows = calls(store)
    assert [(row["tool"], row["outcome"]) for row in rows] == [(named, "denied")] * 40
    assert [row["reason"] for row in rows] == ["unknown_tool"] * 10 + ["rate_limit"] * 30
    for row in rows:
        assert sum(len(str(value)) for value in row.values()) < 1000, row
    size = sum(path.stat().st_size for path in store.parent.glob("gateway.db*"))
    assert size < 2_000_000, f"the audit store grew to {size} bytes"


async def test_a_per_tool_limit_counts_calls_by_a_fallback_and_takes_a_glob(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {"echo": downstreams.fault("echo")},
        health=FAST,
        fallbacks={"cap": ["echo.work"]},
        rate_limits={
            "per_tool": {
                "echo.work": {"calls_per_minute": 1, "burst": 1},
                "echo.i*": {"calls_per_minute": 1, "burst": 1},
            }
        },
        audit={"db": "gateway.db"},
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "echo", "HEALTHY")
        direct = await client.call_tool("echo.work", {"value": 1})
        through_cap = own_answer(await client.call_tool("cap", {"value": 2}))
        info = await client.call_tool("echo.info", {})
        info_again = own_answer(await client.call_tool("echo.info", {}))
    assert not direct.is_error and not info.is_error
    assert through_cap["error"]["code"] == "RATE_LIMITED"
    assert through_cap["error"]["details"]["limit"] == 'rate_limits.per_tool["echo.work"]'
    assert info_again["error"]["code"] == "RATE_LIMITED"
    assert info_again["error"]["details"]["limit"] == 'rate_limits.per_tool["echo.i*"]'
    assert downstreams.calls("echo") == 1  # `work` reached the server once: the call by `cap` was not sent
    rows = [(row["tool"], row["outcome"], row["reason"]) for row in calls(tmp_path / "gateway.db")]
    assert rows == [
        ("echo.work", "ok", None),
        ("cap", "denied", "rate_limit"),
        ("echo.info", "ok", None),
        ("echo.info", "denied", "rate_limit"),
    ]
