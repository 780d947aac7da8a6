"""Fallback chains in order; a call that may have acted is repeated elsewhere only when idempotent."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.helpers import chain_error
from tests.switchboard.helpers import Downstreams, call, servers, switchboard, wait_for_state, write_config

pytestmark = pytest.mark.anyio


async def quarantine(client: Client, downstreams: Downstreams, name: str) -> None:
    downstreams.set_mode(name, "fail")
    for _ in range(3):
        with pytest.raises(MCPError):
            await client.call_tool(f"{name}.work", {})


async def served_by(client: Client, tool: str) -> str:
    result = await client.call_tool(tool, {"via": tool})
    assert not result.is_error, result
    assert result.structured_content is not None
    return str(result.structured_content["server"])


async def test_fallbacks_and_idempotency(tmp_path: Path) -> None:
    d = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {
            "dead": d.dead(),
            "b": d.fault("b"),
            "c": d.fault("c"),
            "x": d.fault("x", mode="timeout"),
            "z": d.fault("z", mode="timeout", idempotent=["work"]),
            "k": d.fault("k", mode="crash", idempotent=["work"]),
            "k2": d.fault("k2", mode="crash"),
            "y": d.fault("y"),
        },
        fallbacks={
            "work": ["dead.work", "b.work", "c.work"],
            "plain": ["x.work", "y.work"],
            "again": ["z.work", "y.work"],
            "crashy": ["k.work", "y.work"],
            "crashy2": ["k2.work", "y.work"],
        },
        health={
            "liveness_s": 30,
            "readiness_s": 30,
            "call_timeout_s": 0.4,
            "check_timeout_s": 1,
            "cooldown_s": 30,
        },
    )
    async with switchboard(config) as client:
        for name in ("b", "c", "x", "z", "k", "k2", "y"):
            await wait_for_state(client, name, "HEALTHY")
        await wait_for_state(client, "dead", "UNHEALTHY")

        # The chain is honoured in order, skipping whatever cannot serve.
        first = await served_by(client, "work")
        await quarantine(client, d, "b")
        second = await served_by(client, "work")
        await quarantine(client, d, "c")
        nothing = chain_error(await call(client, "work"))

        # Timed out after it was sent: repeated on y only when marked idempotent.
        plain = chain_error(await call(client, "plain"))
        again = await served_by(client, "again")
        # Connection lost mid-call: the same rule.
        crashy = await served_by(client, "crashy")
        crashy2 = chain_error(await call(client, "crashy2"))
        status = await servers(client)

    assert (first, second) == ("b", "c")
    assert nothing["code"] == "SERVICE_UNAVAILABLE"
    assert nothing["message"].startswith("work is unavailable: dead unhealthy: start-up failed: ")
    assert [reason["target"] for reason in nothing["details"]["reasons"]] == ["dead.work", "b.work", "c.work"]
    assert "b quarantined: 3 consecutive errors" in nothing["message"]
    assert "c quarantined: 3 consecutive errors" in nothing["message"]

    assert plain["code"] == "UPSTREAM_TIMEOUT"
    assert plain["message"] == (
        "x.work did not answer in time (no answer within 0.4 s); it may have acted, so the call was not "
        "repeated on y.work: 'work' is not marked idempotent for x in the config"
    )
    assert plain["details"] == {
        "tool": "plain",
        "server": "x",
        "repeated": False,
        "failure": "timeout",
    }
    assert again == "y" and crashy == "y"
    assert crashy2["code"] == "UPSTREAM_ERROR"
    assert crashy2["message"].startswith("k2.work failed after the request was sent (")
    assert "not repeated on y.work" in crashy2["message"]

    assert (d.calls("x"), d.calls("z"), d.calls("k"), d.calls("k2")) == (1, 1, 1, 1)
    assert d.calls("y") == 2, "y got the idempotent repeats and nothing else"
    assert status["k"]["failures"]["calls"] == status["k2"]["failures"]["calls"] == 1
