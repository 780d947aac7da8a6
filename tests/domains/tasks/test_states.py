"""The state machine: the table itself, and the full 6x6 matrix applied to real tasks."""

from __future__ import annotations

import itertools

import pytest

from colibri.core.errors import DomainError
from colibri.domains.tasks import service, states
from colibri.storage import Database
from tests.domains.tasks.helpers import bring_to, create, refusal, update, write_back

# SPEC §4, written out again here so the test does not trust the code's own table.
SPEC_TABLE = {
    "todo": {"in_progress", "blocked", "cancelled"},
    "in_progress": {"review", "blocked", "todo", "cancelled"},
    "blocked": {"todo", "in_progress", "cancelled"},
    "review": {"done", "in_progress"},
    "done": set(),
    "cancelled": {"todo"},
}
ALL = sorted(SPEC_TABLE)


def test_the_table_is_the_spec_table() -> None:
    assert set(states.STATUSES) == set(SPEC_TABLE)
    assert {status: set(targets) for status, targets in states.TRANSITIONS.items()} == SPEC_TABLE


@pytest.mark.parametrize(("current", "target"), list(itertools.product(ALL, ALL)))
def test_check_transition_allows_exactly_the_table(current: str, target: str) -> None:
    if target in SPEC_TABLE[current]:
        states.check_transition("T-1", current, target)
        return
    with pytest.raises(DomainError) as caught:
        states.check_transition("T-1", current, target)
    assert caught.value.code == "ERR_INVALID_TRANSITION"
    assert set(caught.value.details["allowed"]) == SPEC_TABLE[current]


def test_full_matrix_on_real_tasks(fresh_db: Database) -> None:
    """All 36 (from, to) pairs: allowed moves succeed and leave a history row; the others are
    refused with the allowed targets, and change nothing."""
    for current, target in itertools.product(ALL, ALL):
        task_id = create(fresh_db, f"{current} -> {target}").id
        before = bring_to(fresh_db, task_id, current)
        assert before.status == current
        if target in SPEC_TABLE[current]:
            if target == "done":
                write_back(fresh_db, task_id)
            after = update(fresh_db, task_id, status=target)
            assert (after.status, after.version) == (target, before.version + 1)
            last = service.get_task_detail(fresh_db, task_id).history[-1]
            assert last.version == after.version
            assert last.changes["status"] == {"from": current, "to": target}
            # Entering or leaving in_progress takes or ends the lease too (SPEC §24), nothing else.
            assert set(last.changes) - {"status"} <= {"assignee", "lease_holder", "lease_expires_at"}
            continue
        error = refusal(fresh_db, task_id, status=target)
        assert error.code == "ERR_INVALID_TRANSITION", (current, target)
        assert set(error.details["allowed"]) == SPEC_TABLE[current]
        assert (error.details["from_status"], error.details["to_status"]) == (current, target)
        for allowed in SPEC_TABLE[current]:
            assert allowed in error.message
        detail = service.get_task_detail(fresh_db, task_id)
        assert (detail.status, detail.version) == (current, before.version)
        assert detail.history[-1].version == before.version


def test_refusal_messages_explain_the_way_out(fresh_db: Database) -> None:
    task_id = create(fresh_db).id
    same = refusal(fresh_db, task_id, status="todo")
    assert "already todo" in same.message and "omit status" in same.message
    bring_to(fresh_db, task_id, "done")
    final = refusal(fresh_db, task_id, status="todo")
    assert "final" in final.message and "new task" in final.message
    assert final.details["allowed"] == []


def test_entering_in_progress_needs_every_dependency_done(fresh_db: Database) -> None:
    first = create(fresh_db, "first").id
    second = create(fresh_db, "second").id
    third = create(fresh_db, "third", depends_on=[first, second]).id
    bring_to(fresh_db, second, "in_progress")
    error = refusal(fresh_db, third, status="in_progress")
    assert error.code == "ERR_DEPENDENCIES_OPEN"
    assert error.details["open_dependencies"] == [
        {"id": first, "status": "todo"},
        {"id": second, "status": "in_progress"},
    ]
    assert f"{first} (todo)" in error.message and f"{second} (in_progress)" in error.message
    bring_to(fresh_db, first, "done")
    error = refusal(fresh_db, third, status="in_progress")
    assert error.details["open_dependencies"] == [{"id": second, "status": "in_progress"}]
    for step in ("review", "done"):
        if step == "done":
            write_back(fresh_db, second)
        update(fresh_db, second, status=step)
    assert update(fresh_db, third, status="in_progress").status == "in_progress"


def test_a_cancelled_dependency_is_not_done(fresh_db: Database) -> None:
    dep = create(fresh_db).id
    task = create(fresh_db, depends_on=[dep]).id
    bring_to(fresh_db, dep, "cancelled")
    error = refusal(fresh_db, task, status="in_progress")
    assert error.details["open_dependencies"] == [{"id": dep, "status": "cancelled"}]


def test_dependencies_changed_in_the_same_update_count(fresh_db: Database) -> None:
    dep = create(fresh_db).id
    task = create(fresh_db, depends_on=[dep]).id
    moved = update(fresh_db, task, depends_on=[], status="in_progress")
    assert (moved.status, moved.depends_on) == ("in_progress", [])
    other = create(fresh_db).id
    error = refusal(fresh_db, other, depends_on=[dep], status="in_progress")
    assert error.code == "ERR_DEPENDENCIES_OPEN"
    assert service.get_task_detail(fresh_db, other).depends_on == []  # nothing half-written


def test_done_needs_a_writeback_and_any_citing_record_counts(fresh_db: Database) -> None:
    task_id = create(fresh_db).id
    bring_to(fresh_db, task_id, "review")
    other = create(fresh_db).id
    write_back(fresh_db, other)  # a record citing another task does not count
    error = refusal(fresh_db, task_id, status="done")
    assert error.code == "ERR_WRITEBACK_REQUIRED"
    assert "audit_session_start" in error.message and "thought_record" in error.message
    assert f'task_id "{task_id}"' in error.message and '"writeback"' in error.message
    example = error.details["example"]
    assert example["tool"] == "thought_record"
    assert example["arguments"]["task_id"] == task_id and example["arguments"]["kind"] == "writeback"
    assert service.get_task_detail(fresh_db, task_id).status == "review"
    write_back(fresh_db, task_id, kind="decision")
    assert update(fresh_db, task_id, status="done").status == "done"


def test_create_can_start_in_a_state_reachable_from_todo(fresh_db: Database) -> None:
    assert create(fresh_db, status="blocked").status == "blocked"
    assert create(fresh_db, status="in_progress").status == "in_progress"
    with pytest.raises(DomainError) as caught:
        create(fresh_db, status="done")
    assert caught.value.code == "ERR_INVALID_TRANSITION"
    assert "todo" in caught.value.message
    dep = create(fresh_db).id
    with pytest.raises(DomainError) as caught:
        create(fresh_db, status="in_progress", depends_on=[dep])
    assert caught.value.code == "ERR_DEPENDENCIES_OPEN"
    # Refused creations consume no id.
    assert create(fresh_db).id == f"T-{int(dep.removeprefix('T-')) + 1}"
