"""SQL helpers whose behaviour the rest relies on."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import pytest

from colibri.domains.tasks import repository
from colibri.storage import Database
from tests.domains.tasks.helpers import create


def test_read_snapshot_is_one_transaction_and_joins_an_open_one(fresh_db: Database) -> None:
    create(fresh_db)
    with fresh_db.snapshot() as conn:
        assert conn.in_transaction
        assert repository.get_task(conn, "T-1") is not None
    assert not fresh_db.in_transaction
    with fresh_db.atomic(), fresh_db.snapshot() as conn:
        conn.execute("UPDATE tasks SET title = 'inside' WHERE id = 'T-1'")
    task = repository.get_task(fresh_db, "T-1")
    assert task is not None and task.title == "inside"


def test_read_snapshot_does_not_see_a_write_committed_meanwhile(
    fresh_db: Database, open_store: Callable[..., Database]
) -> None:
    create(fresh_db, "before")
    other = open_store()
    try:
        with fresh_db.snapshot() as conn:
            assert repository.statuses_of(conn, ["T-1"]) == {"T-1": "todo"}
            other.execute("UPDATE tasks SET status = 'blocked' WHERE id = 'T-1'")
            assert repository.statuses_of(conn, ["T-1"]) == {"T-1": "todo"}
        assert repository.statuses_of(fresh_db, ["T-1"]) == {"T-1": "blocked"}
    finally:
        other.close()


def test_read_snapshot_works_on_a_read_only_file(
    fresh_db: Database, open_store: Callable[..., Database]
) -> None:
    create(fresh_db)
    readonly = open_store(readonly=True)
    try:
        with readonly.snapshot() as conn:
            assert repository.get_task(conn, "T-1") is not None
    finally:
        readonly.close()


def _create_then_fail(db: Database) -> None:
    with db.atomic():
        create(db)
        raise sqlite3.OperationalError("simulated failure after the insert")


def test_next_number_follows_autoincrement_even_after_a_rolled_back_insert(fresh_db: Database) -> None:
    create(fresh_db)
    assert repository.next_number(fresh_db) == 2
    with pytest.raises(sqlite3.OperationalError):
        _create_then_fail(fresh_db)
    assert repository.next_number(fresh_db) == 2
    assert create(fresh_db).id == "T-2"


def test_chunks_handle_more_ids_than_one_statement_takes(fresh_db: Database) -> None:
    with fresh_db.atomic():
        for i in range(1200):
            create(fresh_db, str(i))
    wanted = [f"T-{n}" for n in range(1, 1201)]
    assert len(repository.get_tasks(fresh_db, wanted)) == 1200
    assert len(repository.statuses_of(fresh_db, [*wanted, "T-5000"])) == 1200
