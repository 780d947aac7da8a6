"""Leases on the board (SPEC §24): taken by moving to in_progress, renewed by the holder, refused to
others while they run, taken over once they end, fenced by their token; on both backends.

A lease is made to have ended by moving its expiry into the past in the database: the rules read
the stored expiry against the clock, and waiting out even the shortest lease (10 s) here would
only slow the suite (the acceptance tests in test_claim_agents.py wait for real ones).
"""

from __future__ import annotations

from typing import Any

import pytest

from colibri.core.clock import utc_now
from colibri.core.errors import DomainError
from colibri.domains.tasks import leases, service
from colibri.domains.tasks.arguments import UpdateTaskArgs
from colibri.domains.tasks.models import Task
from colibri.storage import Database
from tests.domains.tasks.helpers import create, write_back


def as_(db: Database, principal: str, task_id: str, **fields: Any) -> Task:
    return service.update_task(db, UpdateTaskArgs(task_id=task_id, **fields), principal=principal)


def refused(db: Database, principal: str, task_id: str, **fields: Any) -> DomainError:
    version = service.get_task_detail(db, task_id).version
    with pytest.raises(DomainError) as caught:
        as_(db, principal, task_id, **fields)
    assert service.get_task_detail(db, task_id).version == version, "a refusal writes nothing"
    return caught.value


def end_lease(db: Database, task_id: str) -> None:
    with db.atomic() as conn:
        past = "2020-01-01T00:00:00.000000Z"
        conn.execute("UPDATE tasks SET lease_expires_at = ? WHERE id = ?", (past, task_id))


def test_moving_to_in_progress_leases_the_task_to_the_caller(fresh_db: Database) -> None:
    task_id = create(fresh_db, "build").id
    before = utc_now()
    task = as_(fresh_db, "ana", task_id, status="in_progress", lease_s=60)
    assert task.lease is not None
    assert (task.lease.holder, task.lease.lease_s, task.lease.token, task.lease.expired) == (
        "ana",
        60,
        2,
        False,
    )
    assert leases.expiry(before, 60) <= task.lease.expires_at <= leases.expiry(utc_now(), 60)
    assert task.assignee == "ana", "the holder becomes the assignee when there is none"
    detail = service.get_task_detail(fresh_db, task_id)
    assert detail.lease == task.lease, "task_get shows the lease as the update returned it"
    taken = detail.history[-1]
    assert taken.principal == "ana"
    assert taken.changes["lease_holder"] == {"from": None, "to": "ana"}
    assert taken.changes["lease_expires_at"] == {"from": None, "to": task.lease.expires_at}


def test_the_default_lease_is_900_seconds_and_an_assignee_stays(fresh_db: Database) -> None:
    task_id = create(fresh_db, "build", assignee="carla").id
    task = as_(fresh_db, "ana", task_id, status="in_progress")
    assert task.lease is not None and task.lease.lease_s == leases.DEFAULT_S
    assert task.assignee == "carla"


def test_another_principal_is_refused_while_the_lease_runs_and_the_holder_renews(fresh_db: Database) -> None:
    task_id = create(fresh_db, "build").id
    taken = as_(fresh_db, "ana", task_id, status="in_progress", lease_s=30)
    assert taken.lease is not None
    for fields in ({"title": "mine now"}, {"status": "review"}, {"take_over": True}):
        error = refused(fresh_db, "bob", task_id, **fields)
        assert error.code == "ERR_LEASED"
        assert (error.details["holder"], error.details["expires_at"]) == ("ana", taken.lease.expires_at)
        assert "leased by ana until" in error.message and "take_over" in error.message
    renewed = as_(fresh_db, "ana", task_id, title="still building")
    assert renewed.lease is not None
    assert renewed.lease.expires_at > taken.lease.expires_at, "any update of the holder renews the lease"
    assert (renewed.lease.lease_s, renewed.lease.token) == (30, taken.lease.token), "the same lease, as long"
    heartbeat = as_(fresh_db, "ana", task_id, lease_s=120)
    assert heartbeat.lease is not None and heartbeat.lease.lease_s == 120
    assert heartbeat.lease.token == taken.lease.token


def test_an_ended_lease_is_taken_over_explicitly_and_the_history_names_both(fresh_db: Database) -> None:
    task_id = create(fresh_db, "build").id
    as_(fresh_db, "ana", task_id, status="in_progress", lease_s=10)
    end_lease(fresh_db, task_id)
    assert service.get_task_detail(fresh_db, task_id).lease.expired  # type: ignore[union-attr]
    error = refused(fresh_db, "bob", task_id, status="review")
    assert error.code == "ERR_LEASED" and error.details["expired"] is True
    assert "lease ended" in error.message and "take_over=true" in error.message
    moved = as_(fresh_db, "bob", task_id, take_over=True, lease_s=20)
    assert moved.lease is not None
    assert (moved.lease.holder, moved.lease.token, moved.lease.lease_s) == ("bob", moved.version, 20)
    assert moved.assignee == "bob", "the assignee the old lease set follows the lease"
    last = service.get_task_detail(fresh_db, task_id).history[-1]
    assert last.principal == "bob"
    assert last.changes["lease_holder"] == {"from": "ana", "to": "bob"}
    assert last.changes["assignee"] == {"from": "ana", "to": "bob"}
    assert refused(fresh_db, "ana", task_id, title="back").code == "ERR_LEASED"


def test_an_old_lease_token_is_refused_even_after_the_task_left_in_progress(fresh_db: Database) -> None:
    task_id = create(fresh_db, "build").id
    first = as_(fresh_db, "ana", task_id, status="in_progress", lease_s=10)
    assert first.lease is not None
    end_lease(fresh_db, task_id)
    second = as_(fresh_db, "bob", task_id, take_over=True)
    assert second.lease is not None and second.lease.token > first.lease.token
    error = refused(fresh_db, "ana", task_id, title="late", lease_token=first.lease.token)
    assert error.code == "ERR_CONFLICT"
    assert error.details["current_lease_token"] == second.lease.token and error.details["holder"] == "bob"
    review = as_(fresh_db, "bob", task_id, status="review", lease_token=second.lease.token)
    assert review.lease is None, "leaving in_progress ends the lease"
    assert refused(fresh_db, "ana", task_id, status="in_progress", lease_token=first.lease.token).code == (
        "ERR_CONFLICT"
    )
    write_back(fresh_db, task_id)
    done = as_(fresh_db, "bob", task_id, status="done", lease_token=second.lease.token)
    assert done.status == "done"


def test_take_over_needs_a_lease_to_take(fresh_db: Database) -> None:
    task_id = create(fresh_db, "build").id
    error = refused(fresh_db, "bob", task_id, take_over=True)
    assert error.code == "ERR_NOT_LEASED" and "only an in_progress task has one" in error.message
    mine = as_(fresh_db, "ana", task_id, status="in_progress")
    again = as_(fresh_db, "ana", task_id, take_over=True)
    assert again.lease is not None and mine.lease is not None
    assert again.lease.token == mine.lease.token, "taking over one's own lease renews it"


def test_a_task_created_in_progress_is_leased_and_list_shows_leases(fresh_db: Database) -> None:
    from colibri.domains.tasks import listing
    from colibri.domains.tasks.arguments import CreateTaskArgs, ListTasksArgs

    task = service.create_task(
        fresh_db, CreateTaskArgs(title="hot", status="in_progress", lease_s=45), principal="ana"
    )
    assert task.lease is not None and (task.lease.holder, task.lease.token, task.lease.lease_s) == (
        "ana",
        1,
        45,
    )
    assert listing.list_tasks(fresh_db, ListTasksArgs()).tasks[0].lease == task.lease
    assert refused(fresh_db, "bob", task.id, title="x").code == "ERR_LEASED"
