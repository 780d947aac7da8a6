"""The database wrapper and the migration runner, on real files."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from colibri.core.errors import StorageError, WouldWait
from colibri.storage import Database, Migration, SQLiteDatabase
from colibri.storage.errors import OperationalError, ReadOnlyError
from colibri.storage.migrations import applied, migrate, pending, require_current

FIRST = Migration("0001_a", ("CREATE TABLE a (x INTEGER)",))
SECOND = Migration("0002_b", ("CREATE TABLE b (y INTEGER)", "INSERT INTO b VALUES (1)"))
BROKEN = Migration("0003_broken", ("CREATE TABLE c (z INTEGER)", "INSERT INTO nowhere VALUES (1)"))


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = SQLiteDatabase.open(tmp_path / "m.db")
    yield database  # type: ignore[misc]
    database.close()


def _tables(db: Database) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_pragmas(db: Database) -> None:
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] > 0


def test_full_sync_on_request(tmp_path: Path) -> None:
    database = SQLiteDatabase.open(tmp_path / "f.db", sync="full")
    try:
        assert database.execute("PRAGMA synchronous").fetchone()[0] == 2
    finally:
        database.close()


def test_migrations_apply_in_order_once(db: Database) -> None:
    assert migrate(db, [FIRST, SECOND]) == ["0001_a", "0002_b"]
    assert migrate(db, [FIRST, SECOND]) == []
    assert applied(db) == ["0001_a", "0002_b"]
    assert db.execute("SELECT count(*) FROM b").fetchone()[0] == 1
    assert db.execute("SELECT applied_at FROM schema_migrations").fetchone()[0]


def test_a_failing_migration_rolls_back_whole(db: Database) -> None:
    migrate(db, [FIRST])
    with pytest.raises(OperationalError, match="nowhere"):
        migrate(db, [FIRST, BROKEN])
    assert "c" not in _tables(db)
    assert applied(db) == ["0001_a"]
    assert [m.name for m in pending(db, [FIRST, BROKEN])] == ["0003_broken"]


def test_what_is_pending_applies_all_or_none(db: Database) -> None:
    migrate(db, [FIRST])
    with pytest.raises(OperationalError, match="nowhere"):
        migrate(db, [FIRST, SECOND, BROKEN])
    assert "b" not in _tables(db)  # applied before the failure in the same run, and rolled back
    assert applied(db) == ["0001_a"]
    assert migrate(db, [FIRST, SECOND]) == ["0002_b"]


def test_duplicate_names_are_refused(db: Database) -> None:
    with pytest.raises(StorageError, match="unique"):
        migrate(db, [FIRST, FIRST])


def test_require_current_names_what_is_missing(db: Database) -> None:
    migrate(db, [FIRST])
    with pytest.raises(StorageError, match=r"0002_b.*open it once in FULL"):
        require_current(db, [FIRST, SECOND])
    migrate(db, [FIRST, SECOND])
    require_current(db, [FIRST, SECOND])


def _insert_then_fail(db: Database, value: int) -> None:
    with db.atomic():
        db.execute("INSERT INTO t VALUES (?)", (value,))
        raise RuntimeError(f"failed after inserting {value}")


def test_atomic_nests_with_savepoints(db: Database) -> None:
    db.execute("CREATE TABLE t (v INTEGER)")
    with db.atomic():
        db.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(RuntimeError):
            _insert_then_fail(db, 2)  # inner level: only its savepoint rolls back
        db.execute("INSERT INTO t VALUES (3)")
    assert [row[0] for row in db.execute("SELECT v FROM t ORDER BY v")] == [1, 3]
    with pytest.raises(RuntimeError):
        _insert_then_fail(db, 4)  # outer level: the whole transaction rolls back
    assert [row[0] for row in db.execute("SELECT v FROM t ORDER BY v")] == [1, 3]


def test_readonly_open_refuses_writes_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="does not exist"):
        SQLiteDatabase.open(tmp_path / "absent.db", readonly=True)
    writer = SQLiteDatabase.open(tmp_path / "ro.db")
    writer.execute("CREATE TABLE t (v INTEGER)")
    writer.close()
    reader = SQLiteDatabase.open(tmp_path / "ro.db", readonly=True)
    try:
        with pytest.raises(ReadOnlyError, match="readonly"):
            reader.execute("INSERT INTO t VALUES (1)")
        assert reader.user_table_count() == 1
    finally:
        reader.close()


def test_open_errors_become_storage_errors(tmp_path: Path) -> None:
    (tmp_path / "dir.db").mkdir()
    with pytest.raises(StorageError, match="is a directory"):
        SQLiteDatabase.open(tmp_path / "dir.db")
    (tmp_path / "junk.db").write_bytes(b"junk" * 1000)
    with pytest.raises(StorageError, match="not a database"):
        SQLiteDatabase.open(tmp_path / "junk.db")


def _wal_size_after_bursts(path: Path, *, background: bool) -> int:
    database = SQLiteDatabase.open(path)
    try:
        database.execute("PRAGMA wal_autocheckpoint = 0")
        if background:
            database.checkpoint_in_background(interval_s=0.02)
        database.execute("CREATE TABLE t (v TEXT)")
        for burst in range(8):
            for i in range(200):
                database.execute("INSERT INTO t VALUES (?)", (f"burst {burst} row {i} " * 10,))
            time.sleep(0.15)  # idle time in which the background thread checkpoints
        return path.with_name(path.name + "-wal").stat().st_size
    finally:
        database.close()


def test_background_checkpoints_keep_the_wal_from_growing(tmp_path: Path) -> None:
    # Without automatic or background checkpoints every frame stays in the WAL; with the
    # background thread the WAL is copied back between bursts and restarts from its start.
    unbounded = _wal_size_after_bursts(tmp_path / "none.db", background=False)
    bounded = _wal_size_after_bursts(tmp_path / "bg.db", background=True)
    assert bounded * 3 < unbounded, (bounded, unbounded)
    assert not (tmp_path / "bg.db-wal").exists(), "closing still checkpoints and removes the WAL"


def test_without_waiting_refuses_at_once_while_another_connection_writes(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    db = SQLiteDatabase.open(path)
    db.execute("CREATE TABLE t (x INTEGER)")
    other = SQLiteDatabase.open(path)
    try:
        with other.atomic():
            other.execute("INSERT INTO t VALUES (1)")
            with db.without_waiting() as refuses:
                assert refuses
                started = time.perf_counter()
                with pytest.raises(WouldWait), db.atomic():
                    db.execute("INSERT INTO t VALUES (2)")
                assert time.perf_counter() - started < 1.0  # the busy timeout is 10 s
            assert not db.in_transaction
        # The lock is free again: the same refusal to wait now writes, and the timeout is back.
        with db.without_waiting() as refuses, db.atomic():
            db.execute("INSERT INTO t VALUES (3)")
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] > 0
        assert [row[0] for row in db.execute("SELECT x FROM t ORDER BY x")] == [1, 3]
    finally:
        other.close()
        db.close()


def test_after_a_refusal_to_wait_the_next_statement_outside_a_transaction_waits_again(tmp_path: Path) -> None:
    """A refusal leaves the busy timeout at 0 (a run of them costs no PRAGMA), and what comes next
    outside a transaction — a plain write here — still waits for another writer, as it always did."""
    path = tmp_path / "busy.db"
    db = SQLiteDatabase.open(path)
    db.execute("CREATE TABLE t (x INTEGER)")
    with db.without_waiting(), db.atomic():
        db.execute("INSERT INTO t VALUES (1)")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        other = SQLiteDatabase.open(path)
        with other.atomic():
            other.execute("INSERT INTO t VALUES (2)")
            held.set()
            release.wait(10)
        other.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)  # the other connection holds the write lock now
        threading.Timer(0.3, release.set).start()
        started = time.perf_counter()
        db.execute("INSERT INTO t VALUES (3)")  # waits for it rather than failing at once
        waited = time.perf_counter() - started
    finally:
        release.set()
        holder.join(10)
    assert waited >= 0.15
    assert [row[0] for row in db.execute("SELECT x FROM t ORDER BY x")] == [1, 2, 3]
    db.close()
