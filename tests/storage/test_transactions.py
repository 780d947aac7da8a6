"""What a write transaction remembers (storage/memo.py), on both backends, and PostgreSQL's pipelined
transactions: errors that surface late, `careful()`, and a connection lost and got back."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest

from colibri.domains.log import tree
from colibri.domains.proofs import merkle
from colibri.storage import Database, errors, open_database
from tests.helpers import postgres as pg


def _entries(db: Database) -> list[bytes]:
    return [bytes(row[0]) for row in db.execute("SELECT entry_hash FROM log_entries ORDER BY idx")]


def _tree_is_whole(db: Database) -> None:
    """The stored tree is the one RFC 9162 makes of the stored entries, at every size."""
    entries = _entries(db)
    assert [row[0] for row in db.execute("SELECT idx FROM log_entries ORDER BY idx")] == list(
        range(len(entries))
    )
    for size in range(1, len(entries) + 1):
        assert tree.root(db, size) == merkle.tree_root(entries[:size]), f"size {size}"


def _append_then_fail(db: Database, refs: list[int]) -> None:
    with db.atomic() as conn:
        for ref in refs:
            tree.append(conn, tree.RECORD, ref, random.Random(ref).randbytes(32))
        raise ZeroDivisionError


def test_a_savepoint_rolled_back_forgets_the_appends_it_made(fresh_db: Database) -> None:
    rng = random.Random(1)
    with fresh_db.atomic() as conn:
        assert tree.append(conn, tree.RECORD, 1, rng.randbytes(32)) == 0
        with pytest.raises(ZeroDivisionError):
            _append_then_fail(fresh_db, [2, 3])  # a savepoint: the transaction is open
        assert tree.append(conn, tree.RECORD, 4, rng.randbytes(32)) == 1, "the memo went back too"
        assert tree.append(conn, tree.RECORD, 5, rng.randbytes(32)) == 2
    _tree_is_whole(fresh_db)
    assert [row[0] for row in fresh_db.execute("SELECT ref FROM log_entries ORDER BY idx")] == [1, 4, 5]


def test_two_writers_taking_turns_keep_one_tree(open_store: Callable[..., Database]) -> None:
    """Each writer keeps the tail its last transaction left as a hint: a hint the other writer
    made stale is noticed, and the edge read again."""
    first, second = open_store(), open_store()
    rng = random.Random(2)
    for turn in range(40):
        writer = first if rng.random() < 0.5 else second
        with writer.atomic() as conn:
            for _ in range(rng.randrange(1, 6)):
                tree.append(conn, tree.ACTION, turn, rng.randbytes(32))
    _tree_is_whole(first)


def test_a_rolled_back_transaction_leaves_no_hint_behind(open_store: Callable[..., Database]) -> None:
    db = open_store()
    rng = random.Random(3)
    with db.atomic() as conn:
        tree.append(conn, tree.RECORD, 1, rng.randbytes(32))
    with pytest.raises(ZeroDivisionError):
        _append_then_fail(db, [2])
    with db.atomic() as conn:
        assert tree.append(conn, tree.RECORD, 3, rng.randbytes(32)) == 1
    _tree_is_whole(db)


# --- PostgreSQL: pipelined statements ---


@pytest.fixture
def pg_db(postgres_server: pg.PostgresServer) -> Iterator[Database]:
    db = open_database(postgres_server.new_database())
    db.execute("CREATE TABLE keys (id INTEGER PRIMARY KEY)")
    db.execute("INSERT INTO keys (id) VALUES (1)")
    yield db
    db.close()


def _keys(db: Database) -> list[int]:
    return [row[0] for row in db.execute("SELECT id FROM keys ORDER BY id")]


def _duplicate_in_a_savepoint(db: Database) -> None:
    with db.atomic() as conn:
        conn.execute("INSERT INTO keys (id) VALUES (2)")
        with db.atomic():
            conn.execute("INSERT INTO keys (id) VALUES (1)")  # sent, not waited for
        conn.execute("INSERT INTO keys (id) VALUES (3)")


def test_an_error_that_surfaces_late_fails_the_commit_and_writes_nothing(pg_db: Database) -> None:
    with pytest.raises(errors.IntegrityError, match="duplicate key"):
        _duplicate_in_a_savepoint(pg_db)
    assert _keys(pg_db) == [1]
    assert not pg_db.in_transaction
    with pg_db.atomic() as conn:  # the connection is fine for the next transaction
        conn.execute("INSERT INTO keys (id) VALUES (4)")
    assert _keys(pg_db) == [1, 4]


def _duplicate(db: Database) -> None:
    with db.atomic() as conn:
        conn.execute("INSERT INTO keys (id) VALUES (1)")


def test_careful_raises_the_error_in_its_own_savepoint(pg_db: Database) -> None:
    with pg_db.careful(), pg_db.atomic() as conn:
        conn.execute("INSERT INTO keys (id) VALUES (2)")
        with pytest.raises(errors.IntegrityError):
            _duplicate(pg_db)  # a savepoint directly inside the transaction
        conn.execute("INSERT INTO keys (id) VALUES (3)")
    assert _keys(pg_db) == [1, 2, 3]


def _terminate(postgres_server: pg.PostgresServer, pid: int) -> None:
    with psycopg.connect(postgres_server.url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))


def _backend(db: Database) -> int:
    return int(db.execute("SELECT pg_backend_pid()").fetchone()[0])


def test_a_connection_lost_mid_transaction_writes_nothing_and_comes_back(
    pg_db: Database, postgres_server: pg.PostgresServer
) -> None:
    pid = _backend(pg_db)

    def lose_it_midway() -> None:
        with pg_db.atomic() as conn:
            conn.execute("INSERT INTO keys (id) VALUES (2)")
            _terminate(postgres_server, pid)
            conn.execute("SELECT count(*) FROM keys").fetchone()

    with pytest.raises(errors.UnavailableError, match="was lost") as lost:
        lose_it_midway()
    assert "nothing of it was written" in str(lost.value)
    reason = pg_db.unavailable()
    assert reason is not None and "reconnecting" in reason
    with pg_db.atomic() as conn:  # the first try comes at once
        conn.execute("INSERT INTO keys (id) VALUES (3)")
    assert pg_db.unavailable() is None and _backend(pg_db) != pid
    assert _keys(pg_db) == [1, 3]


def test_a_server_refusing_connections_is_retried_with_backoff(
    pg_db: Database, postgres_server: pg.PostgresServer
) -> None:
    name = pg_db.target.rsplit("/", 1)[1]
    postgres_server.admin(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
    try:
        _terminate(postgres_server, _backend(pg_db))
        with pytest.raises(errors.UnavailableError):
            pg_db.execute("SELECT 1").fetchone()
        with pytest.raises(errors.UnavailableError, match="reconnecting") as refused:
            pg_db.execute("SELECT 1")  # the first try failed: the next waits for its backoff
        assert "next attempt in" in str(refused.value) and "retry the call" in str(refused.value)
        assert not pg_db.reconnect()
    finally:
        postgres_server.admin(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
    deadline = time.monotonic() + 10
    while not pg_db.reconnect():
        assert time.monotonic() < deadline, "never reconnected"
        time.sleep(0.05)
    assert pg_db.unavailable() is None
    assert _keys(pg_db) == [1]
