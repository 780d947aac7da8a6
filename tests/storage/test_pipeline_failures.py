"""A PostgreSQL write transaction whose pipelined statement failed where the client has not seen it yet.

psycopg reads the results that have arrived whenever it sends a statement, so where a statement's
error surfaces depends on timing (storage/postgres/pipelining.py). Here the failing statement is
the last one sent before the transaction ends, so nothing has read its result yet: the rollback
and psycopg's prepared statements must not depend on the client having seen it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from psycopg import pq

from colibri.core.errors import StorageError
from colibri.storage import Database, open_database
from colibri.storage.postgres.database import PostgresDatabase
from tests.helpers import postgres as pg

TOUCH = "UPDATE log_meta SET adopted = adopted WHERE id = 1"
PREPARED = "SELECT ?::int + 1"  # run often enough that psycopg prepares it


class Boom(Exception):
    """A failure of the code running inside the transaction, not of the database."""


@pytest.fixture
def pg_db(postgres_server: pg.PostgresServer) -> Iterator[PostgresDatabase]:
    db = open_database(postgres_server.new_database())
    assert isinstance(db, PostgresDatabase)
    try:
        yield db
    finally:
        db.close()


def _prepare(db: Database) -> None:
    for n in range(5):  # psycopg's prepare_threshold: the next use sends a Parse
        assert db.execute(PREPARED, (n,)).fetchone()[0] == n + 1


def _failing(db: Database, then: str | None = "SELECT 2", *, give_up: bool = False) -> None:
    """In the transaction or savepoint `db.atomic()` opens: a statement that fails, `then` sent
    after it (skipped by the server), and either give up at once (Boom) or read, where it surfaces."""
    with db.atomic() as conn:
        conn.execute("SELECT 1/0")  # sent, its result unread: the server skips what follows
        if then is not None:
            conn.execute(then, (7,) if "?" in then else ())  # the error may surface here already
        if give_up:
            raise Boom
        conn.execute("SELECT 1").fetchone()  # the error surfaces by here


def test_a_transaction_given_up_before_its_error_arrived_is_rolled_back(pg_db: PostgresDatabase) -> None:
    with pytest.raises(Boom):  # Boom, not the database's error in its place
        _failing(pg_db, None, give_up=True)  # nothing is sent after the failed statement
    assert pg_db.conn.info.transaction_status == pq.TransactionStatus.IDLE
    with pg_db.atomic() as conn:  # a transaction of its own, not one inside the failed one
        conn.execute(TOUCH)
    assert pg_db.conn.info.transaction_status == pq.TransactionStatus.IDLE


def test_a_statement_prepared_after_a_failed_one_is_prepared_again(pg_db: PostgresDatabase) -> None:
    _prepare(pg_db)
    with pytest.raises((Boom, StorageError)):
        _failing(pg_db, PREPARED, give_up=True)  # its Parse is sent, and skipped
    assert pg_db.execute(PREPARED, (8,)).fetchone()[0] == 9


def _contained(db: PostgresDatabase, then: str = "SELECT 2") -> None:
    """A transaction that commits after a savepoint rolled back a failed statement and `then`;
    carefully, as the chain reruns a batch (else any error fails it all: errors.Failures)."""
    with db.careful(), db.atomic() as conn:
        with pytest.raises(StorageError):
            _failing(db, then)
        conn.execute(TOUCH)


def test_a_statement_prepared_after_an_error_a_savepoint_contained_is_prepared_again(
    pg_db: PostgresDatabase,
) -> None:
    # psycopg forgets what it prepared at a ROLLBACK TO whose result it checks, which it stops
    # doing once that ROLLBACK TO is prepared itself: here after six such transactions.
    for _ in range(6):
        _contained(pg_db)
    _prepare(pg_db)
    _contained(pg_db, PREPARED)  # its Parse is sent, and skipped
    assert pg_db.execute(PREPARED, (8,)).fetchone()[0] == 9
