"""`ask_user` approvals (SPEC §22): the calling session's own user decides through an elicitation.

A real switchboard over HTTP with the tokens ana and bob, in front of a fault server whose `work`
counts every call it receives. The Python SDK's handshake-era client answers the elicitation with
its callback (accept with approve, decline), a 2026-era client answers it as an input request of
its call's rounds, and a client that declared no elicitation gets APPROVAL_REQUIRED; only accepted
calls reach the server, and each answer is a log entry naming the user who gave it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import clean_env
from tests.switchboard.audit_helpers import actions, verify
from tests.switchboard.test_approvals import Gateway, work

pytestmark = pytest.mark.anyio


class User:
    """A person at a client: answers each elicitation as told, and remembers what was asked."""

    def __init__(self, action: str, content: dict[str, Any] | None = None) -> None:
        self.action, self.content = action, content
        self.asked: list[str] = []

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action=self.action, content=self.content)  # type: ignore[arg-type]


@asynccontextmanager
async def client(gateway: Gateway, principal: str, mode: str, user: User | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {gateway.tokens[principal]}"}
    callbacks = {} if user is None else {"elicitation_callback": user.elicit}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(gateway.url, http_client=http), mode=mode, **callbacks) as connected,
    ):
        yield connected


async def test_the_callers_own_user_approves_or_declines(tmp_path: Path) -> None:
    gateway = Gateway(tmp_path, timeout_s=30, rules=[{"tools": ["echo.*"], "mode": "ask_user"}])
    yes = User("accept", {"approve": True, "comment": "looks right"})
    no, modern = User("decline"), User("accept", {"approve": True})
    with gateway.running():
        async with gateway.client("ana"):  # the server healthy first
            pass
        async with client(gateway, "ana", "legacy", yes) as ana:
            accepted = await work(ana, "legacy yes \u202e")
        async with client(gateway, "bob", "legacy", no) as bob:
            declined = await work(bob, "legacy no")
        async with client(gateway, "ana", "auto", modern) as ana:
            assert ana.protocol_version == "2026-07-28"
            in_rounds = await work(ana, "modern yes")
        async with client(gateway, "bob", "auto", None) as bob:
            unasked = await work(bob, "cannot be asked")

    assert accepted["ok"] is True and accepted["result"]["echo"] == {"value": "legacy yes \u202e"}, accepted
    assert len(yes.asked) == 1 and "echo.work" in yes.asked[0] and '"legacy yes' in yes.asked[0]
    assert "\u202e" not in yes.asked[0] and "\\u202e" in yes.asked[0]  # shown as its escape, never obeyed
    assert declined["error"]["code"] == "APPROVAL_DENIED" and no.asked, declined
    assert in_rounds["ok"] is True and in_rounds["result"]["echo"] == {"value": "modern yes"}, in_rounds
    assert len(modern.asked) == 1 and '"modern yes"' in modern.asked[0]
    assert unasked["error"]["code"] == "APPROVAL_REQUIRED", unasked
    assert "elicitation" in unasked["error"]["message"]
    assert gateway.downstreams.calls("echo") == 2

    rows = actions(gateway.store)
    decisions = [
        (
            row["tool"],
            row["principal"],
            json.loads(row["arguments"])["comment"],
            json.loads(row["arguments"])["via"],
        )
        for row in rows
        if row["tool"].startswith("switchboard:approvals/")
    ]
    assert decisions == [
        ("switchboard:approvals/approve", "ana", "looks right", "ask_user"),
        ("switchboard:approvals/deny", "bob", "the user's answer was decline", "ask_user"),
        ("switchboard:approvals/approve", "ana", "", "ask_user"),
    ]
    refused = {row["reason"] for row in rows if row["tool"] == "echo.work" and row["outcome"] == "denied"}
    assert refused == {"approval_denied", "approval_required"}
    assert sum(row["outcome"] == "held" for row in rows) == 4
    assert verify(gateway.store, clean_env(tmp_path))[0] == 0
