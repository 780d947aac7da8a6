"""The official TypeScript SDK client (pinned 1.32.2) over Streamable HTTP with a bearer token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from colibri.core.modes import Mode
from colibri.tools.catalog import TOOLS, admitted_tools
from tests.helpers import query
from tests.http.helpers import http_env, make_token, running
from tests.http.node import require_node, run_client

EVERY_TOOL: list[dict[str, Any]] = [
    {"list": True},
    {"tool": "server_ping"},
    {"tool": "server_health"},
    {"tool": "task_create", "arguments": {"title": "from TypeScript"}, "save": "task"},
    {"tool": "task_get", "arguments": {"task_id": "$task.data.id"}},
    {"tool": "task_update", "arguments": {"task_id": "$task.data.id", "status": "in_progress"}},
    {"tool": "task_list", "arguments": {}},
    {"tool": "task_next_actions", "arguments": {}},
    {"tool": "audit_session_start", "arguments": {"agent_id": "ts"}, "save": "session"},
    {
        "tool": "thought_record",
        "arguments": {"session_id": "$session.data.session_id", "kind": "plan", "content": "ts"},
        "save": "record",
    },
    {"tool": "thought_record_list", "arguments": {"session_id": "$session.data.session_id"}},
    {"tool": "audit_verify_chain", "arguments": {}},
    {"tool": "merkle_finalize", "arguments": {"session_id": "$session.data.session_id"}},
    {
        "tool": "merkle_root",
        "arguments": {"session_id": "$session.data.session_id", "record_id": "$record.data.record_id"},
    },
    {"tool": "skill_list", "arguments": {}},
]


def test_every_tool_works_from_the_typescript_client(tmp_path: Path) -> None:
    require_node()
    env = http_env(tmp_path)
    token = make_token(env, "ts-writer")
    with running(env, tmp_path) as server:
        report = run_client({"url": server.url, "token": token, "steps": EVERY_TOOL}, tmp_path)
    assert report["connectError"] is None
    assert report["server"]["name"] == "colibri"
    listed, *calls = report["steps"]
    assert sorted(listed["list"]) == sorted(tool.name for tool in TOOLS)
    assert {entry["tool"] for entry in calls} == {tool.name for tool in TOOLS}
    for entry in calls:
        assert entry["threw"] is None, entry
        assert entry["isError"] is False and entry["structuredContent"]["ok"] is True, entry
        data = entry["structuredContent"]["data"]
        assert not (isinstance(data, dict) and data.get("ok") is False), entry
    rows = query(tmp_path / "colibri.db", "SELECT DISTINCT principal FROM actions")
    assert [row["principal"] for row in rows] == ["ts-writer"]


def test_the_typescript_client_with_a_read_token_and_with_bad_tokens(tmp_path: Path) -> None:
    require_node()
    env = http_env(tmp_path)
    reader = make_token(env, "ts-reader", "read")
    steps = [{"list": True}, {"tool": "task_create", "arguments": {"title": "no"}}, {"tool": "task_list"}]
    with running(env, tmp_path) as server:
        read = run_client({"url": server.url, "token": reader, "steps": steps}, tmp_path)
        wrong = run_client({"url": server.url, "token": "col_wrong", "steps": steps}, tmp_path)
        missing = run_client({"url": server.url, "token": None, "steps": steps}, tmp_path)
    listed, refused, allowed = read["steps"]
    assert sorted(listed["list"]) == sorted(admitted_tools(Mode.READONLY))
    assert refused["threw"] is None and refused["isError"] is True
    error = refused["structuredContent"]["error"]
    assert error["code"] == "TOOL_NOT_ADMITTED" and "scope 'read'" in error["message"]
    assert allowed["structuredContent"]["ok"] is True
    for report in (wrong, missing):
        # The SDK reports the 401's body: the SDK server's `invalid_token` bearer error.
        assert report["steps"] == [] and '"error": "invalid_token"' in report["connectError"], report
    rows = query(tmp_path / "colibri.db", "SELECT principal, outcome FROM actions ORDER BY sequence_no")
    assert [(row["principal"], row["outcome"]) for row in rows] == [
        ("ts-reader", "denied"),
        ("ts-reader", "ok"),
    ]
