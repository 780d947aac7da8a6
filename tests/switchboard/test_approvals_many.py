"""Twenty calls held at once from four principals (SPEC §22, issue 42): approved and denied in a random
order by approvers other than each caller, every outcome matches its own decision and nothing crosses
between calls: an approved call's answer echoes its own arguments, a denied one carries its own
comment, and the server receives exactly the approved calls.

The decisions are made as `colibri switchboard approvals approve|deny` makes them (`decide_held`, in
this process, on the store the switchboard shares): twenty processes of the command would cost a
minute on a small machine.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from colibri.switchboard.audit import decide_held
from colibri.switchboard.config import load
from tests.helpers import clean_env, query
from tests.switchboard.audit_helpers import actions, verify
from tests.switchboard.test_approvals import Gateway, work
from tests.switchboard.test_http_face import create_token

pytestmark = pytest.mark.anyio

PRINCIPALS = ("ana", "bob", "carol", "dan")


async def test_twenty_held_calls_from_four_principals_get_their_own_decisions(tmp_path: Path) -> None:
    rules = [{"tools": ["echo.work"], "approvers": list(PRINCIPALS), "mode": "approver"}]
    gateway = Gateway(tmp_path, timeout_s=60, rules=rules)
    gateway.tokens["dan"] = create_token("dan", tmp_path / "tokens.jsonl").stdout.strip()
    spec = load(gateway.config).audit
    assert spec is not None
    chosen = random.Random(42)
    calls = [(PRINCIPALS[n % 4], f"call {n}", chosen.random() < 0.5) for n in range(20)]
    answers: dict[str, dict[str, Any]] = {}
    with gateway.running():
        async with (
            gateway.client("ana") as ana,
            gateway.client("bob") as bob,
            gateway.client("carol") as carol,
            gateway.client("dan") as dan,
        ):
            clients: dict[str, Client] = {"ana": ana, "bob": bob, "carol": carol, "dan": dan}

            async def make(principal: str, value: str) -> None:
                answers[value] = await work(clients[principal], value)

            async with anyio.create_task_group() as running:
                for principal, value, _ in calls:
                    running.start_soon(make, principal, value)
                held = await _all_held(gateway.store, 20)
                assert gateway.downstreams.calls("echo") == 0
                order = list(calls)
                chosen.shuffle(order)
                for principal, value, approve in order:
                    approver = PRINCIPALS[(PRINCIPALS.index(principal) + 1) % 4]
                    decide_held(spec, held[principal, value], approve, approver, f"decided on {value}")

    for _, value, approve in calls:
        answer = answers[value]
        if approve:
            assert answer["ok"] is True and answer["result"]["echo"] == {"value": value}, (value, answer)
        else:
            assert answer["error"]["code"] == "APPROVAL_DENIED", (value, answer)
            assert answer["error"]["details"]["comment"] == f"decided on {value}", (value, answer)
    assert gateway.downstreams.calls("echo") == sum(approve for _, _, approve in calls)
    rows = [row for row in actions(gateway.store) if row["tool"] == "echo.work"]
    finished = {row["outcome"] for row in rows} - {"held"}
    assert finished == {"ok", "denied"}
    assert sum(row["outcome"] == "ok" for row in rows) == sum(approve for _, _, approve in calls)
    assert verify(gateway.store, clean_env(tmp_path))[0] == 0


async def _all_held(store: Path, count: int) -> dict[tuple[str, str], str]:
    """(principal, value) -> approval id, once `count` calls are held."""
    with anyio.fail_after(30):
        while True:
            rows = query(store, "SELECT id, principal, arguments FROM approvals WHERE state = 'pending'")
            if len(rows) == count:
                return {(row["principal"], json.loads(row["arguments"])["value"]): row["id"] for row in rows}
            await anyio.sleep(0.05)
