"""Creating, updating and reading tasks through the domain functions, on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri.core.errors import DomainError
from colibri.domains.tasks import service
from colibri.storage import Database, SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.domains.tasks.helpers import create, refusal, update


def test_create_fills_defaults_and_returns_what_is_stored(fresh_db: Database) -> None:
    task = create(fresh_db, "write the parser")
    assert task.id == "T-1"
    assert (task.status, task.priority, task.description) == ("todo", "medium", "")
    assert (task.depends_on, task.tags, task.assignee, task.version) == ([], [], None, 1)
    assert task.created_at == task.updated_at and task.created_at.endswith("Z")
    stored = service.get_task_detail(fresh_db, task.id)
    assert stored.model_dump(include=set(type(task).model_fields)) == task.model_dump()


def test_create_with_every_field(fresh_db: Database) -> None:
    dep = create(fresh_db).id
    task = create(
        fresh_db,
        "ship it",
        description="all of it",
        priority="critical",
        depends_on=[dep, dep],
        tags=["release", "ops", "release"],
        assignee="agent-7",
    )
    assert task.depends_on == [dep]  # duplicates dropped, order kept
    assert task.tags == ["release", "ops"]
    assert (task.priority, task.assignee, task.description) == ("critical", "agent-7", "all of it")
    assert service.get_task_detail(fresh_db, task.id).tags == ["release", "ops"]


def test_ids_count_up_and_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "ids.db"
    db = SQLiteDatabase.open(path)
    migrate(db, MIGRATIONS)
    assert [create(db, str(i)).id for i in range(3)] == ["T-1", "T-2", "T-3"]
    db.close()
    db = SQLiteDatabase.open(path)
    migrate(db, MIGRATIONS)
    assert create(db).id == "T-4"
    db.close()


def test_update_changes_only_what_is_given_and_records_it(fresh_db: Database) -> None:
    task = create(fresh_db, "old title", tags=["a"], assignee="ann")
    updated = update(fresh_db, task.id, title="new title", priority="high", tags=["b", "c"])
    assert (updated.title, updated.priority, updated.tags) == ("new title", "high", ["b", "c"])
    assert (updated.assignee, updated.version) == ("ann", 2)
    assert updated.updated_at >= task.updated_at and updated.created_at == task.created_at
    detail = service.get_task_detail(fresh_db, task.id)
    assert detail.model_dump(include=set(type(updated).model_fields)) == updated.model_dump()
    assert [entry.version for entry in detail.history] == [1, 2]
    assert [entry.event for entry in detail.history] == ["created", "updated"]
    assert detail.history[0].changes["title"] == {"from": None, "to": "old title"}
    assert detail.history[1].changes == {
        "title": {"from": "old title", "to": "new title"},
        "priority": {"from": "medium", "to": "high"},
        "tags": {"from": ["a"], "to": ["b", "c"]},
    }


def test_assignee_null_unassigns(fresh_db: Database) -> None:
    task = create(fresh_db, assignee="ann")
    assert update(fresh_db, task.id, assignee=None).assignee is None
    assert service.get_task_detail(fresh_db, task.id).history[-1].changes == {
        "assignee": {"from": "ann", "to": None}
    }


def test_an_update_that_changes_nothing_writes_nothing(fresh_db: Database) -> None:
    task = create(fresh_db, "same", tags=["x"])
    again = update(fresh_db, task.id, title="same", tags=["x", "x"])
    assert again == task
    assert len(service.get_task_detail(fresh_db, task.id).history) == 1


def test_every_change_adds_one_history_row_and_one_version(fresh_db: Database) -> None:
    task = create(fresh_db)
    for i in range(5):
        update(fresh_db, task.id, description=f"draft {i}")
    detail = service.get_task_detail(fresh_db, task.id)
    assert detail.version == 6
    assert [entry.version for entry in detail.history] == [1, 2, 3, 4, 5, 6]
    assert detail.history[-1].changes == {"description": {"from": "draft 3", "to": "draft 4"}}


def test_get_lists_the_tasks_it_blocks(fresh_db: Database) -> None:
    base = create(fresh_db).id
    first = create(fresh_db, depends_on=[base]).id
    create(fresh_db)
    third = create(fresh_db, depends_on=[base]).id
    assert service.get_task_detail(fresh_db, base).blocks == [first, third]
    update(fresh_db, first, depends_on=[])
    assert service.get_task_detail(fresh_db, base).blocks == [third]
    assert service.get_task_detail(fresh_db, third).blocks == []


def test_unknown_ids_are_not_found(fresh_db: Database) -> None:
    with pytest.raises(DomainError) as caught:
        service.get_task_detail(fresh_db, "T-42")
    assert caught.value.code == "ERR_NOT_FOUND"
    assert "T-42" in caught.value.message and "task_list" in caught.value.message
    error = refusal(fresh_db, "T-42", title="x")
    assert (error.code, error.details["task_id"]) == ("ERR_NOT_FOUND", "T-42")


def test_expected_version_must_match(fresh_db: Database) -> None:
    task = create(fresh_db)
    assert update(fresh_db, task.id, title="v2", expected_version=1).version == 2
    error = refusal(fresh_db, task.id, title="v3", expected_version=1)
    assert error.code == "ERR_CONFLICT"
    assert (error.details["expected_version"], error.details["current_version"]) == (1, 2)
    assert "expected_version 2" in error.message and "task_get" in error.message
    assert service.get_task_detail(fresh_db, task.id).title == "v2"
    assert "changed since version 1: it is now at version 2" in error.message
    ahead = refusal(fresh_db, task.id, title="v3", expected_version=9)
    assert ahead.code == "ERR_CONFLICT"
    assert "has no version 9 yet: it is at version 2" in ahead.message


def test_a_stale_version_wins_over_other_refusals(fresh_db: Database) -> None:
    """The caller's view is out of date: say that, not what is wrong with the current state."""
    task = create(fresh_db)
    update(fresh_db, task.id, title="moved on")
    error = refusal(fresh_db, task.id, status="done", expected_version=1)
    assert error.code == "ERR_CONFLICT"


def test_a_refused_update_leaves_no_trace(fresh_db: Database) -> None:
    task = create(fresh_db)
    missing = refusal(fresh_db, task.id, title="new", depends_on=["T-99"])
    assert missing.code == "ERR_NOT_FOUND"
    detail = service.get_task_detail(fresh_db, task.id)
    assert (detail.title, detail.version, len(detail.history)) == (task.title, 1, 1)
