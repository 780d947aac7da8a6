"""Driver errors leave the SQLite backend only as the StorageError tree, message and cause kept."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from colibri.core.errors import StorageError
from colibri.storage import SQLiteDatabase
from colibri.storage.errors import (
    BusyError,
    DecodeError,
    IntegrityError,
    OperationalError,
    UnavailableError,
)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[SQLiteDatabase]:
    database = SQLiteDatabase.open(tmp_path / "e.db")
    database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)")
    yield database
    database.close()


def test_a_constraint_refusal_is_an_integrity_error_chained_to_the_driver_error(db: SQLiteDatabase) -> None:
    db.execute("INSERT INTO t (v) VALUES ('a')")
    with pytest.raises(IntegrityError, match="UNIQUE constraint failed") as caught:
        db.execute("INSERT INTO t (v) VALUES ('a')")
    assert isinstance(caught.value, StorageError)
    assert isinstance(caught.value.__cause__, sqlite3.IntegrityError)


def test_executemany_and_transactions_map_errors_too(db: SQLiteDatabase) -> None:
    with pytest.raises(IntegrityError):
        db.executemany("INSERT INTO t (v) VALUES (?)", [("x",), ("x",)])
    with pytest.raises(OperationalError, match="no such table"), db.atomic() as conn:
        conn.execute("SELECT * FROM missing")
    assert not db.in_transaction  # the failed transaction was rolled back


def test_a_writer_that_waits_past_the_busy_timeout_gets_a_busy_error(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    holder = SQLiteDatabase.open(path)
    waiter = SQLiteDatabase.open(path)
    waiter.execute("PRAGMA busy_timeout = 50")
    try:
        with holder.atomic():
            holder.execute("CREATE TABLE x (v INTEGER)")
            with pytest.raises(BusyError, match="locked"), waiter.atomic():
                pass
    finally:
        waiter.close()
        holder.close()


def test_text_that_is_not_utf8_is_a_decode_error_when_read(db: SQLiteDatabase) -> None:
    db.execute("INSERT INTO t (v) VALUES (CAST(x'ff' AS TEXT))")
    with pytest.raises(DecodeError):
        db.execute("SELECT v FROM t").fetchall()
    with pytest.raises(DecodeError):
        list(db.tuples("SELECT v FROM t"))
    assert db.execute(f"SELECT {db.dialect.as_bytes('v')} FROM t").fetchone()[0] == b"\xff"


def test_a_file_that_is_not_a_database_is_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database file, not at all" * 100)
    with pytest.raises(UnavailableError, match="cannot open database"):
        SQLiteDatabase.open(path)
