"""The input models: what they accept, what they refuse and what they advertise."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from colibri.domains.tasks.arguments import (
    CreateTaskArgs,
    GetTaskArgs,
    ListTasksArgs,
    NextActionsArgs,
    UpdateTaskArgs,
)


def problems(model: type[BaseModel], raw: dict[str, Any]) -> list[tuple[str, str]]:
    """(path, message) of every problem, failing the test if `raw` is accepted."""
    with pytest.raises(ValidationError) as caught:
        model.model_validate(raw)
    return [(".".join(str(p) for p in e["loc"]), e["msg"]) for e in caught.value.errors()]


def test_title_limits() -> None:
    assert CreateTaskArgs(title="x" * 200).title == "x" * 200
    assert problems(CreateTaskArgs, {"title": ""}) == [("title", "String should have at least 1 character")]
    assert problems(CreateTaskArgs, {"title": "x" * 201}) == [
        ("title", "String should have at most 200 characters")
    ]
    assert problems(CreateTaskArgs, {"title": "   "})[0][0] == "title"
    assert problems(CreateTaskArgs, {}) == [("title", "Field required")]
    assert problems(CreateTaskArgs, {"title": 5}) == [("title", "Input should be a valid string")]


def test_description_limit() -> None:
    assert len(CreateTaskArgs(title="t", description="d" * 20_000).description) == 20_000
    for size in (20_001, 1_000_000):
        assert problems(CreateTaskArgs, {"title": "t", "description": "d" * size}) == [
            ("description", "String should have at most 20000 characters")
        ]


def test_enumerations() -> None:
    assert problems(CreateTaskArgs, {"title": "t", "priority": "urgent"}) == [
        ("priority", "Input should be 'critical', 'high', 'medium' or 'low'")
    ]
    assert problems(UpdateTaskArgs, {"task_id": "T-1", "status": "doing"}) == [
        ("status", "Input should be 'todo', 'in_progress', 'blocked', 'review', 'done' or 'cancelled'")
    ]


def test_lists_and_ids() -> None:
    args = CreateTaskArgs(title="t", depends_on=["T-1", "T-22"], tags=["a", "b"])
    assert (args.depends_on, args.tags) == (["T-1", "T-22"], ["a", "b"])
    for bad in ("1", "t-1", "T-0", "T-01", "T-1 ", "task 1"):
        assert problems(CreateTaskArgs, {"title": "t", "depends_on": [bad]})[0][0] == "depends_on.0"
        assert problems(GetTaskArgs, {"task_id": bad})[0][0] == "task_id"
    assert problems(CreateTaskArgs, {"title": "t", "depends_on": "T-1"}) == [
        ("depends_on", "Input should be a valid list")
    ]
    assert problems(CreateTaskArgs, {"title": "t", "tags": ["ok", ""]})[0][0] == "tags.1"
    assert problems(CreateTaskArgs, {"title": "t", "tags": [1]})[0][0] == "tags.0"
    assert problems(CreateTaskArgs, {"title": "t", "tags": ["x"] * 51})[0][0] == "tags"
    assert problems(GetTaskArgs, {"task_id": 1}) == [("task_id", "Input should be a valid string")]


def test_update_rules() -> None:
    assert UpdateTaskArgs(task_id="T-1", assignee=None).given() == {"assignee": None}
    assert UpdateTaskArgs(task_id="T-1", title="x", expected_version=3).given() == {"title": "x"}
    nothing = problems(UpdateTaskArgs, {"task_id": "T-1", "expected_version": 2})
    assert len(nothing) == 1 and "nothing to update" in nothing[0][1] and "title" in nothing[0][1]
    for field in ("title", "status", "priority", "depends_on", "tags", "description", "expected_version"):
        found = problems(UpdateTaskArgs, {"task_id": "T-1", "title": "x", field: None})
        assert found == [(field, "Value error, must not be null; omit the field to keep its current value")]
    for bad in ("3", True, 0, 1.5):
        assert problems(UpdateTaskArgs, {"task_id": "T-1", "title": "x", "expected_version": bad})[0][0] == (
            "expected_version"
        )


def test_list_and_next_actions_bounds() -> None:
    assert ListTasksArgs().limit == 50 and NextActionsArgs().limit == 5
    assert ListTasksArgs(limit=200).limit == 200
    assert problems(ListTasksArgs, {"limit": 201}) == [("limit", "Input should be less than or equal to 200")]
    assert problems(ListTasksArgs, {"limit": 0})[0][0] == "limit"
    assert problems(ListTasksArgs, {"limit": "10"}) == [("limit", "Input should be a valid integer")]
    assert problems(NextActionsArgs, {"limit": 51})[0][0] == "limit"
    assert ListTasksArgs.model_validate({"status": "todo"}).statuses() == ["todo"]
    assert ListTasksArgs.model_validate({"status": ["done", "todo", "done"]}).statuses() == ["done", "todo"]
    assert "unknown status 'doing'" in problems(ListTasksArgs, {"status": "doing"})[0][1]
    assert problems(ListTasksArgs, {"status": []})[0][0] == "status"
    assert problems(ListTasksArgs, {"status": 3})[0][0] == "status"


def test_unknown_fields_are_ignored() -> None:
    assert CreateTaskArgs.model_validate({"title": "t", "colour": "red"}).title == "t"


def test_advertised_schemas() -> None:
    update = UpdateTaskArgs.model_json_schema()
    assert update["required"] == ["task_id"]
    for name in ("title", "status", "depends_on", "expected_version"):
        assert "anyOf" not in update["properties"][name], name  # never null
    assert update["properties"]["assignee"]["anyOf"][1] == {"type": "null"}  # null unassigns
    listing = ListTasksArgs.model_json_schema()["properties"]["status"]["anyOf"]
    assert [option.get("type") for option in listing] == ["string", "array", "null"]
    create = CreateTaskArgs.model_json_schema()
    assert create["required"] == ["title"]
    assert all(prop.get("description") for prop in create["properties"].values())
