"""The five task tools end to end: a real `colibri serve` subprocess driven by the SDK client."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from tests.helpers import call, chain_error, connect, domain_error, ok_data

pytestmark = pytest.mark.anyio

TASK_TOOLS = {"task_create", "task_get", "task_update", "task_list", "task_next_actions"}
TASK_FIELDS = {
    "id",
    "title",
    "description",
    "status",
    "priority",
    "depends_on",
    "tags",
    "assignee",
    "created_at",
    "updated_at",
    "version",
    "lease",
}


async def create(client: Client, **arguments: Any) -> dict[str, Any]:
    data: dict[str, Any] = ok_data(await call(client, "task_create", {"title": "a task", **arguments}))
    return data


async def write_back(client: Client, task_id: str) -> None:
    """What the refusal tells an agent to do: open a session, record a writeback citing the task."""
    session = ok_data(await call(client, "audit_session_start", {"purpose": f"work on {task_id}"}))
    arguments = {
        "session_id": session["session_id"],
        "kind": "writeback",
        "task_id": task_id,
        "content": f"finished {task_id}; checked by the tests",
    }
    ok_data(await call(client, "thought_record", arguments))


async def test_tools_are_listed_with_schemas(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) >= TASK_TOOLS
    for name in TASK_TOOLS:
        tool = listed[name]
        assert tool.description and len(tool.description) > 80
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None
        read_only = tool.annotations is not None and tool.annotations.read_only_hint
        assert read_only == (name not in {"task_create", "task_update"})
    assert listed["task_create"].input_schema["required"] == ["title"]
    assert "ERR_WRITEBACK_REQUIRED" in (listed["task_update"].description or "")


async def test_a_task_from_creation_to_done(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        dep = await create(client, title="design", priority="high", tags=["plan"])
        assert set(dep) == TASK_FIELDS
        assert (dep["id"], dep["status"], dep["version"]) == ("T-1", "todo", 1)
        task = await create(client, title="build", depends_on=[dep["id"]], assignee="agent-1")
        assert (task["id"], task["depends_on"], task["assignee"]) == ("T-2", ["T-1"], "agent-1")

        got = ok_data(await call(client, "task_get", {"task_id": "T-1"}))
        assert got["blocks"] == ["T-2"]
        assert {key: got[key] for key in TASK_FIELDS} == dep
        assert [entry["event"] for entry in got["history"]] == ["created"]

        refused = domain_error(await call(client, "task_update", {"task_id": "T-2", "status": "in_progress"}))
        assert refused["code"] == "ERR_DEPENDENCIES_OPEN"
        assert refused["open_dependencies"] == [{"id": "T-1", "status": "todo"}]
        assert "T-1 (todo)" in refused["message"]

        for status in ("in_progress", "review"):
            updated = ok_data(await call(client, "task_update", {"task_id": "T-1", "status": status}))
            assert updated["status"] == status
        refused = domain_error(await call(client, "task_update", {"task_id": "T-1", "status": "done"}))
        assert refused["code"] == "ERR_WRITEBACK_REQUIRED"
        assert "audit_session_start" in refused["message"] and "thought_record" in refused["message"]
        # Following the guidance to the letter works: the example's arguments fit the real tool.
        example = refused["example"]
        assert example["tool"] == "thought_record" and example["arguments"]["task_id"] == "T-1"
        session = ok_data(await call(client, "audit_session_start", {}))
        arguments = {**example["arguments"], "session_id": session["session_id"], "content": "built T-1"}
        ok_data(await call(client, example["tool"], arguments))
        done = ok_data(
            await call(client, "task_update", {"task_id": "T-1", "status": "done", "expected_version": 3})
        )
        assert (done["status"], done["version"]) == ("done", 4)

        started = ok_data(await call(client, "task_update", {"task_id": "T-2", "status": "in_progress"}))
        assert started["status"] == "in_progress"
        history = ok_data(await call(client, "task_get", {"task_id": "T-1"}))["history"]
        assert [entry["changes"].get("status", {}).get("to") for entry in history] == [
            "todo",
            "in_progress",
            "review",
            "done",
        ]
        final = domain_error(await call(client, "task_update", {"task_id": "T-1", "status": "todo"}))
        assert (final["code"], final["allowed"]) == ("ERR_INVALID_TRANSITION", [])


async def test_list_and_next_actions(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        first = await create(client, title="alpha parser", tags=["api"], assignee="ann")
        second = await create(client, title="beta", description="the PARSER docs", priority="critical")
        third = await create(client, title="gamma", depends_on=[first["id"]], tags=["api"])
        ok_data(await call(client, "task_update", {"task_id": second["id"], "status": "in_progress"}))

        page = ok_data(await call(client, "task_list", {"limit": 2}))
        assert [t["id"] for t in page["tasks"]] == ["T-1", "T-2"] and page["next_cursor"]
        rest = ok_data(await call(client, "task_list", {"limit": 2, "cursor": page["next_cursor"]}))
        assert [t["id"] for t in rest["tasks"]] == ["T-3"] and rest["next_cursor"] is None
        assert rest["tasks"][0] == third

        async def listed(**filters: Any) -> list[str]:
            data = ok_data(await call(client, "task_list", filters))
            return [t["id"] for t in data["tasks"]]

        assert await listed(status="todo") == ["T-1", "T-3"]
        assert await listed(status=["in_progress", "done"]) == ["T-2"]
        assert await listed(tag="api", assignee="ann") == ["T-1"]
        assert await listed(text="parser") == ["T-1", "T-2"]
        assert await listed(text="parser", status="todo") == ["T-1"]

        plan = ok_data(await call(client, "task_next_actions", {}))
        assert [(a["task"]["id"], a["action"], a["unblocks"]) for a in plan["actions"]] == [
            ("T-2", "continue", 0),
            ("T-1", "start", 1),
        ]
        assert all(a["reason"] for a in plan["actions"])
        assert plan["blocked"] == [
            {
                "task_id": "T-3",
                "title": "gamma",
                "status": "todo",
                "waiting_on": ["T-1"],
                "reason": "waits on T-1 (todo)",
            }
        ]
        assert plan["blocked_total"] == 1
        one = ok_data(await call(client, "task_next_actions", {"limit": 1}))
        assert [a["task"]["id"] for a in one["actions"]] == ["T-2"]


async def test_bad_input_gets_invalid_params_naming_the_field(server_env: dict[str, str]) -> None:
    cases: list[tuple[str, Any, str, str]] = [
        ("task_create", {"title": ""}, "title", "at least 1 character"),
        ("task_create", {"title": "x" * 201}, "title", "at most 200 characters"),
        ("task_create", {}, "title", "Field required"),
        ("task_create", {"title": 42}, "title", "valid string"),
        (
            "task_create",
            {"title": "t", "priority": "urgent"},
            "priority",
            "'critical', 'high', 'medium' or 'low'",
        ),
        ("task_create", {"title": "t", "status": "doing"}, "status", "'todo', 'in_progress'"),
        ("task_create", {"title": "t", "description": "d" * 1_000_000}, "description", "at most 20000"),
        ("task_create", {"title": "t", "depends_on": "T-1"}, "depends_on", "valid list"),
        ("task_create", {"title": "t", "depends_on": ["one"]}, "depends_on.0", "pattern"),
        ("task_create", {"title": "t", "tags": [7]}, "tags.0", "valid string"),
        ("task_get", {}, "task_id", "Field required"),
        ("task_get", {"task_id": 1}, "task_id", "valid string"),
        ("task_update", {"task_id": "T-1"}, "", "nothing to update"),
        ("task_update", {"task_id": "T-1", "title": None}, "title", "must not be null"),
        ("task_update", {"task_id": "T-1", "status": "finished"}, "status", "'todo', 'in_progress'"),
        (
            "task_update",
            {"task_id": "T-1", "title": "x", "expected_version": "1"},
            "expected_version",
            "integer",
        ),
        ("task_list", {"limit": 500}, "limit", "less than or equal to 200"),
        ("task_list", {"status": "doing"}, "status", "unknown status 'doing'"),
        ("task_list", {"cursor": "page-2"}, "cursor", "pass next_cursor from the previous page"),
        ("task_next_actions", {"limit": 0}, "limit", "greater than or equal to 1"),
        ("task_next_actions", {"limit": True}, "limit", "valid integer"),
    ]
    async with connect(server_env) as client:
        await create(client)
        for tool, arguments, path, fragment in cases:
            error = chain_error(await call(client, tool, arguments))
            assert error["code"] == "INVALID_PARAMS", (tool, arguments)
            issues = error["details"]["issues"]
            assert [issue["path"] for issue in issues] == [path], (tool, arguments, issues)
            assert fragment in issues[0]["message"], (tool, arguments, issues)
            assert path in error["message"] or path == ""


async def test_unknown_ids_and_wrong_states_are_domain_errors(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        await create(client)
        missing = domain_error(await call(client, "task_get", {"task_id": "T-99"}))
        assert (missing["code"], missing["task_id"]) == ("ERR_NOT_FOUND", "T-99")
        assert missing["message"] == "task T-99 not found; use task_list to see existing ids"
        missing = domain_error(await call(client, "task_update", {"task_id": "T-99", "title": "x"}))
        assert missing["code"] == "ERR_NOT_FOUND"
        missing = domain_error(await call(client, "task_create", {"title": "t", "depends_on": ["T-5"]}))
        assert (missing["code"], missing["missing"]) == ("ERR_NOT_FOUND", ["T-5"])
        wrong = domain_error(await call(client, "task_update", {"task_id": "T-1", "status": "review"}))
        assert wrong["code"] == "ERR_INVALID_TRANSITION"
        assert wrong["allowed"] == ["in_progress", "blocked", "cancelled"]
        assert "in_progress, blocked, cancelled" in wrong["message"]
        stale = domain_error(
            await call(client, "task_update", {"task_id": "T-1", "title": "x", "expected_version": 9})
        )
        assert (stale["code"], stale["current_version"], stale["expected_version"]) == ("ERR_CONFLICT", 1, 9)
        await create(client, depends_on=["T-1"])
        cycle = domain_error(await call(client, "task_update", {"task_id": "T-1", "depends_on": ["T-2"]}))
        assert (cycle["code"], cycle["cycle"]) == ("ERR_DEPENDENCY_CYCLE", ["T-1", "T-2", "T-1"])
        assert "T-1 → T-2 → T-1" in cycle["message"]
        # Nothing above changed T-1.
        assert ok_data(await call(client, "task_get", {"task_id": "T-1"}))["version"] == 1


async def test_ids_continue_after_a_restart(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        assert [(await create(client))["id"] for _ in range(2)] == ["T-1", "T-2"]
    async with connect(server_env) as client:
        assert (await create(client))["id"] == "T-3"
        assert ok_data(await call(client, "task_get", {"task_id": "T-1"}))["id"] == "T-1"


PATHS = {
    "todo": [],
    "in_progress": ["in_progress"],
    "blocked": ["blocked"],
    "review": ["in_progress", "review"],
    "done": ["in_progress", "review", "done"],
    "cancelled": ["cancelled"],
}
ALLOWED = {
    "todo": ["in_progress", "blocked", "cancelled"],
    "in_progress": ["review", "blocked", "todo", "cancelled"],
    "blocked": ["todo", "in_progress", "cancelled"],
    "review": ["done", "in_progress"],
    "done": [],
    "cancelled": ["todo"],
}


async def test_full_transition_matrix_over_stdio(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:

        async def move(task_id: str, status: str) -> dict[str, Any]:
            if status == "done":
                await write_back(client, task_id)
            return await call(client, "task_update", {"task_id": task_id, "status": status})

        for current, path in PATHS.items():
            for target in PATHS:
                task_id = (await create(client, title=f"{current} to {target}"))["id"]
                for step in path:
                    ok_data(await move(task_id, step))
                version = 1 + len(path)
                reply = await move(task_id, target)
                if target in ALLOWED[current]:
                    moved = ok_data(reply)
                    assert (moved["status"], moved["version"]) == (target, version + 1)
                    history = ok_data(await call(client, "task_get", {"task_id": task_id}))["history"]
                    changes = history[-1]["changes"]
                    assert changes["status"] == {"from": current, "to": target}
                    assert set(changes) - {"status"} <= {"assignee", "lease_holder", "lease_expires_at"}
                else:
                    error = domain_error(reply)
                    assert error["code"] == "ERR_INVALID_TRANSITION", (current, target)
                    assert error["allowed"] == ALLOWED[current]
                    assert all(name in error["message"] for name in ALLOWED[current])
                    unchanged = ok_data(await call(client, "task_get", {"task_id": task_id}))
                    assert (unchanged["status"], unchanged["version"]) == (current, version)
