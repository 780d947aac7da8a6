"""The log's inserts of a pipelined PostgreSQL write transaction, held and sent as one statement.

storage/postgres/held.py: while errors are deferred, `log_entries` and `log_nodes` rows wait on the
client and go out together before COMMIT, or before a statement naming either table; a savepoint
rolled back to forgets those held since it was made.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from colibri.core.merkle import build_levels, leaf_hash
from colibri.domains.log import tree
from colibri.storage import Database, open_database
from tests.helpers import postgres as pg

# The table's name is a parameter: a statement naming the log's tables would send the rows first.
INSERTED = "SELECT n_tup_ins FROM pg_stat_xact_user_tables WHERE relname = ?"
UPDATED = "SELECT n_tup_upd FROM pg_stat_xact_user_tables WHERE relname = ?"
ANCHOR = "UPDATE trail_head SET seq = ?, hash = ? WHERE id = 1"  # domains/trail/repository.py's


class Boom(Exception):
    """A failure of the code inside a savepoint."""


@pytest.fixture(scope="module")
def pg_url(postgres_server: pg.PostgresServer) -> str:
    return postgres_server.new_database()


@pytest.fixture
def db(pg_url: str) -> Iterator[Database]:
    opened = open_database(pg_url)
    try:
        yield opened
    finally:
        opened.close()


def _entry(n: int) -> bytes:
    return f"entry {n}".encode().ljust(32, b".")


def _log(db: Database) -> list[tuple[int, bytes]]:
    return [
        (int(row[0]), bytes(row[1]))
        for row in db.execute("SELECT idx, entry_hash FROM log_entries ORDER BY idx")
    ]


def test_the_log_rows_of_a_transaction_go_out_together_and_a_read_of_the_log_sees_them(db: Database) -> None:
    start = len(_log(db))
    with db.atomic() as conn:
        for n in range(4):
            tree.append(conn, "action", n, _entry(n))
        assert int(conn.execute(INSERTED, ("log_entries",)).fetchone()[0]) == 0  # held, not sent
        assert int(conn.execute(INSERTED, ("log_nodes",)).fetchone()[0]) == 0
        assert conn.execute("SELECT count(*) FROM log_entries").fetchone()[0] == start + 4  # sent first
        assert int(conn.execute(INSERTED, ("log_entries",)).fetchone()[0]) == 4  # as one statement
        tree.append(conn, "action", 4, _entry(4))
    log = _log(db)
    assert [idx for idx, _ in log[start:]] == list(range(start, start + 5))
    assert [entry for _, entry in log[start:]] == [_entry(n) for n in range(5)]
    with db.snapshot() as conn:  # the stored nodes give the root the entries give
        assert tree.root(conn, len(log)) == build_levels([leaf_hash(entry) for _, entry in log])[-1][0]


def _two_then_boom(conn: Database) -> None:
    with conn.atomic() as inner:
        tree.append(inner, "action", 1, _entry(11))
        tree.append(inner, "action", 2, _entry(12))
        raise Boom


def test_a_savepoint_rolled_back_forgets_the_log_rows_held_since(db: Database) -> None:
    start = len(_log(db))
    with db.atomic() as conn:
        tree.append(conn, "action", 0, _entry(10))
        with pytest.raises(Boom):
            _two_then_boom(conn)
        with conn.atomic() as inner:  # released: its row stays held by the transaction
            tree.append(inner, "action", 3, _entry(13))
        tree.append(conn, "action", 4, _entry(14))
    assert _log(db)[start:] == [(start, _entry(10)), (start + 1, _entry(13)), (start + 2, _entry(14))]


def _anchor(conn: Database, seq: int) -> None:
    conn.execute(ANCHOR, (seq, f"hash {seq}"))


def _anchor_then_boom(conn: Database) -> None:
    with conn.atomic() as inner:
        _anchor(inner, 3)
        raise Boom


def test_the_trail_anchor_goes_out_once_with_its_last_value(db: Database) -> None:
    with db.atomic() as conn:
        for seq in (1, 2):
            _anchor(conn, seq)
        with pytest.raises(Boom):
            _anchor_then_boom(conn)
        assert int(conn.execute(UPDATED, ("trail_head",)).fetchone()[0]) == 0  # held, not sent
    assert tuple(db.execute("SELECT seq, hash FROM trail_head WHERE id = 1").fetchone()) == (2, "hash 2")
    with db.atomic() as conn:
        _anchor(conn, 4)
        assert tuple(conn.execute("SELECT seq FROM trail_head WHERE id = 1").fetchone()) == (4,)  # sent first
        _anchor(conn, 5)
    assert tuple(db.execute("SELECT seq, hash FROM trail_head WHERE id = 1").fetchone()) == (5, "hash 5")
