"""task_next_actions(claim=true) and leases through the real server (SPEC §24): a claim is a write,
refused where writes are (READONLY, a read-scoped token), and bad lease arguments are INVALID_PARAMS
naming the range."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import call, chain_error, connect, domain_error, ok_data
from tests.http.helpers import http_client, http_env, make_token, running

pytestmark = pytest.mark.anyio


async def test_a_claim_over_stdio_is_local_s_and_bad_lease_lengths_name_the_range(
    server_env: dict[str, str],
) -> None:
    async with connect(server_env) as client:
        ok_data(await call(client, "task_create", {"title": "first"}))
        answer = ok_data(await call(client, "task_next_actions", {"claim": True, "lease_s": 30}))
        (taken,) = answer["actions"]
        assert (taken["action"], taken["task"]["status"]) == ("start", "in_progress")
        assert taken["task"]["lease"]["holder"] == "local" and taken["task"]["lease"]["lease_s"] == 30
        assert answer["reason"] is None
        empty = ok_data(await call(client, "task_next_actions", {"claim": True}))
        assert empty["actions"] == []
        assert empty["reason"].startswith("nothing ready: 1 task in progress for you")
        for tool, arguments in (
            ("task_next_actions", {"claim": True, "lease_s": 5}),
            ("task_next_actions", {"claim": True, "lease_s": "60"}),
            ("task_next_actions", {"claim": True, "lease_s": 86_401}),
            ("task_update", {"task_id": "T-1", "lease_s": 1.5}),
            ("task_create", {"title": "x", "status": "in_progress", "lease_s": 0}),
        ):
            error = chain_error(await call(client, tool, arguments))
            assert error["code"] == "INVALID_PARAMS", arguments
            assert "must be an integer number of seconds from 10 to 86,400" in error["message"]
            assert error["details"]["issues"][0]["path"] == "lease_s"
        error = chain_error(await call(client, "task_next_actions", {"lease_s": 60}))
        assert "lease_s applies only with claim=true" in error["message"]
        stale = domain_error(
            await call(client, "task_update", {"task_id": "T-1", "title": "y", "lease_token": 1})
        )
        assert stale["code"] == "ERR_CONFLICT" and stale["current_lease_token"] == 2
        token = taken["task"]["lease"]["token"]
        ok_data(await call(client, "task_update", {"task_id": "T-1", "title": "y", "lease_token": token}))


async def test_a_claim_is_refused_in_readonly_like_any_write(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        ok_data(await call(client, "task_create", {"title": "first"}))
    async with connect({**server_env, "COLIBRI_MODE": "READONLY"}) as client:
        error = chain_error(await call(client, "task_next_actions", {"claim": True}))
        assert error["code"] == "TOOL_NOT_ADMITTED"
        assert "claim=true" in error["message"] and "READONLY" in error["message"]
        (offer,) = ok_data(await call(client, "task_next_actions", {"claim": False}))["actions"]
        assert offer["action"] == "start" and offer["task"]["status"] == "todo"


async def test_a_read_token_cannot_claim_and_a_write_token_claims_under_its_name(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    reader, writer = make_token(env, "lead", "read"), make_token(env, "ana", "write")
    with running(env, tmp_path) as server:
        async with http_client(server.url, writer) as as_ana, http_client(server.url, reader) as as_lead:
            ok_data(await call(as_ana, "task_create", {"title": "first"}))
            error = chain_error(await call(as_lead, "task_next_actions", {"claim": True}))
            assert error["code"] == "TOOL_NOT_ADMITTED" and "claim=true cannot run" in error["message"]
            assert ok_data(await call(as_lead, "task_next_actions", {}))["actions"][0]["action"] == "start"
            (taken,) = ok_data(await call(as_ana, "task_next_actions", {"claim": True}))["actions"]
            assert taken["task"]["lease"]["holder"] == "ana" and taken["task"]["assignee"] == "ana"
            assert ok_data(await call(as_lead, "task_next_actions", {}))["actions"] == []
