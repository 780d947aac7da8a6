"""Who changed what (SPEC §14): every task history entry and every thought record names the
principal the server proved for the call that made it — a token's name over HTTP, `local` on stdio
— beside whatever label the agent chose for itself (`agent_id`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import call, connect, ok_data, query
from tests.http.helpers import http_client, http_env, make_token, running

pytestmark = pytest.mark.anyio


async def test_history_and_records_name_the_token_that_made_each_change(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    ana, ben = make_token(env, "ana"), make_token(env, "ben")
    with running(env, tmp_path) as server:
        async with (
            http_client(server.url, ana) as as_ana,
            http_client(server.url, ben, mode="auto") as as_ben,
        ):
            task = ok_data(await call(as_ana, "task_create", {"title": "ship the index"}))
            # blocked, not in_progress: that would lease the task to ben, and refuse local's change below.
            ok_data(await call(as_ben, "task_update", {"task_id": task["id"], "status": "blocked"}))
            session = ok_data(await call(as_ben, "audit_session_start", {}))["session_id"]
            # The agent may call itself anything; the principal is what the server proved.
            claimed = {
                "session_id": session,
                "kind": "decision",
                "content": "use a B-tree",
                "agent_id": "ana",
            }
            ok_data(await call(as_ben, "thought_record", {**claimed, "task_id": task["id"]}))
            detail = ok_data(await call(as_ana, "task_get", {"task_id": task["id"]}))
            listed = ok_data(await call(as_ana, "thought_record_list", {"session_id": session}))
    async with connect(env) as local:
        ok_data(await call(local, "task_update", {"task_id": task["id"], "priority": "high"}))
        local_detail = ok_data(await call(local, "task_get", {"task_id": task["id"]}))

    assert [(entry["event"], entry["principal"]) for entry in detail["history"]] == [
        ("created", "ana"),
        ("updated", "ben"),
    ]
    assert [entry["principal"] for entry in local_detail["history"]] == ["ana", "ben", "local"]
    [record] = listed["records"]
    assert (record["agent_id"], record["principal"]) == ("ana", "ben")
    stored = query(tmp_path / "colibri.db", "SELECT agent_id, principal FROM thought_records")
    assert [tuple(row) for row in stored] == [("ana", "ben")]
