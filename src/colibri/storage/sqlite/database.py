"""The SQLite backend: opens a file with Colibri's pragmas, nests transactions, maps errors.

Every statement runs under `map_exceptions`, so sqlite3 errors leave this module only as
`StorageError`s (storage/errors.py), with the driver's message.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from colibri.core.database import Connection, Params
from colibri.core.env import missing_db_folder
from colibri.core.errors import StorageError, WouldWait
from colibri.storage.errors import BusyError, UnavailableError
from colibri.storage.memo import TransactionMemo
from colibri.storage.sqlite import dialect
from colibri.storage.sqlite.checkpointer import INTERVAL_S as CHECKPOINT_INTERVAL_S
from colibri.storage.sqlite.checkpointer import Checkpointer
from colibri.storage.sqlite.errors import convert, map_exceptions
from colibri.storage.sqlite.rows import SQLiteCursor

BUSY_TIMEOUT_MS = 10_000


class SQLiteDatabase:
    """A SQLite connection in autocommit mode; `atomic()` opens (nested) transactions.

    Built by `open` (a path), or around a connection someone else opened (the offline verifier).
    """

    dialect = dialect.DIALECT

    def __init__(self, conn: sqlite3.Connection, path: Path, *, readonly: bool) -> None:
        conn.row_factory = sqlite3.Row
        self.conn = conn
        self.path = path
        self.readonly = readonly
        self._depth = 0
        self._savepoints = 0  # numbers savepoints: a name is never reused within a transaction
        self._nowait = False
        # The connection's busy timeout now: a refusal to wait sets it to 0 and leaves it there, so
        # that a run of refusals (the switchboard's audit writes, quick tools) costs no statement;
        # the next statement that may wait (outside a transaction) sets it back first (`_may_wait`).
        self._busy_ms = BUSY_TIMEOUT_MS
        self._checkpointer: Checkpointer | None = None
        self._memo = TransactionMemo()

    @property
    def target(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"SQLiteDatabase({str(self.path)!r}, readonly={self.readonly})"

    @classmethod
    def open(cls, path: Path, *, readonly: bool = False, sync: str = "normal") -> SQLiteDatabase:
        """Open (and in write mode create) the file; WAL, foreign keys and a busy timeout on."""
        path = Path(path)
        try:
            if readonly:
                if not path.is_file():
                    raise UnavailableError(
                        f"database file {path} does not exist; open it once in FULL to create it"
                    )
                conn = sqlite3.connect(
                    _readonly_uri(path), uri=True, isolation_level=None, check_same_thread=False
                )
            else:
                if path.is_dir():
                    raise UnavailableError(
                        f"database path {path} is a directory; point COLIBRI_DB_PATH at a file"
                    )
                missing = missing_db_folder(path)
                if missing is not None:
                    raise UnavailableError(
                        f"cannot create database {path}: {missing}, or choose a file in an existing folder"
                    )
                path.parent.mkdir(exist_ok=True)
                conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            if not readonly:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(f"PRAGMA synchronous = {'FULL' if sync == 'full' else 'NORMAL'}")
            # Reading the schema proves the file is a database (a corrupt file fails here).
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except (sqlite3.Error, OSError) as exc:
            hint = ""
            if readonly and _wal(path).exists() and not os.access(path.parent, os.W_OK):
                hint = (
                    f"; its write-ahead log {_wal(path).name} holds changes that read-only storage cannot "
                    "replay: open it once in FULL where the folder is writable"
                )
            raise UnavailableError(f"cannot open database {path}: {exc}{hint}") from exc
        return cls(conn, path, readonly=readonly)

    @contextmanager
    def atomic(self) -> Iterator[Connection]:
        """All or nothing: the outermost level takes the write lock at once (BEGIN IMMEDIATE),
        so two processes serialise their read-then-write steps; inner levels are savepoints."""
        depth = self._depth
        memo = self._memo
        if depth == 0:
            if self._nowait:
                self._begin_without_waiting()
            else:
                self._may_wait()
                self._run(dialect.BEGIN_WRITE)
            self._savepoints = 0
            memo.begin()
        else:
            self._savepoints += 1
            name = f"colibri_{self._savepoints}"
            self._run(f"SAVEPOINT {name}")
            memo.savepoint()
        self._depth += 1
        try:
            yield self
        except BaseException:
            self._depth -= 1
            if depth == 0:
                memo.end()
                if self.conn.in_transaction:  # SQLite ends some failed transactions itself
                    self._run("ROLLBACK")
            else:
                memo.rollback_to()
                self._run(f"ROLLBACK TO {name}")
                self._run(f"RELEASE {name}")
            raise
        self._depth -= 1
        if depth:
            memo.release()
            self._run(f"RELEASE {name}")
            return
        try:
            self._run("COMMIT")
        except StorageError:
            memo.end()
            # A failed COMMIT can leave the transaction open; end it so the next one can begin.
            if self.conn.in_transaction:
                self._run("ROLLBACK")
            raise
        memo.commit()

    @contextmanager
    def without_waiting(self) -> Iterator[bool]:
        """Inside, a write transaction that would wait for another writer raises `WouldWait` at
        once instead (nothing begun, nothing written)."""
        if self.readonly or self._depth:
            yield False
            return
        self._nowait = True
        try:
            yield True
        finally:
            self._nowait = False

    def _begin_without_waiting(self) -> None:
        if self._busy_ms:
            self._run("PRAGMA busy_timeout = 0")
            self._busy_ms = 0
        try:
            self._run(dialect.BEGIN_WRITE)
        except BusyError:
            raise WouldWait("another process holds the database's write lock") from None

    def _may_wait(self) -> None:
        """Before a statement that may wait for another writer: the busy timeout is set again."""
        if not self._busy_ms and not self.conn.in_transaction:
            self._run(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._busy_ms = BUSY_TIMEOUT_MS

    @property
    def errors_deferred(self) -> bool:
        return False  # every statement's error is raised as it runs

    @contextmanager
    def careful(self) -> Iterator[None]:
        """Nothing to do: SQLite reports every statement's error as it runs."""
        yield

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """One deferred read transaction around several queries, so they all see the same state
        even while another process writes. It takes no write lock, so it works on a read-only
        file; inside a transaction already open, that transaction is the snapshot."""
        if self.conn.in_transaction:
            yield self
            return
        self._may_wait()
        self._run(dialect.BEGIN_READ)
        try:
            yield self
        finally:
            if self.conn.in_transaction:
                self._run("COMMIT")

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def execute(self, sql: str, params: Params = ()) -> SQLiteCursor:
        if not self._busy_ms:
            self._may_wait()
        # try/except rather than `with map_exceptions`: this runs for every statement of every
        # call, and a try costs nothing until something is raised (the mapping is the same).
        try:
            return SQLiteCursor(self.conn.execute(sql, params))
        except sqlite3.Error as exc:
            raise convert(exc) from exc

    def executemany(self, sql: str, params: Iterable[Params]) -> SQLiteCursor:
        if not self._busy_ms:
            self._may_wait()
        with map_exceptions:
            return SQLiteCursor(self.conn.executemany(sql, params))

    def tuples(self, sql: str, params: Params = ()) -> SQLiteCursor:
        """Rows as plain tuples: cheaper than `sqlite3.Row` where a query reads many rows."""
        if not self._busy_ms:
            self._may_wait()
        cursor = self.conn.cursor()
        cursor.row_factory = None
        with map_exceptions:
            return SQLiteCursor(cursor.execute(sql, params))

    def _run(self, sql: str) -> None:
        try:
            self.conn.execute(sql)
        except sqlite3.Error as exc:
            raise convert(exc) from exc

    @property
    def memo(self) -> dict[str, Any]:
        return self._memo.current if self._depth else {}

    @property
    def hints(self) -> dict[str, Any]:
        return self._memo.hints

    def unavailable(self) -> str | None:
        return None  # a file is there or not; opening it is phase 2's business

    def reconnect(self) -> bool:
        return True

    def checkpoint_in_background(self, interval_s: float = CHECKPOINT_INTERVAL_S) -> None:
        """Move WAL checkpoints off this connection's commits (see storage/sqlite/checkpointer.py)."""
        if self.readonly or self._checkpointer is not None:
            return
        self._run("PRAGMA wal_autocheckpoint = 0")
        self._checkpointer = Checkpointer(self.path, interval_s)
        self._checkpointer.start()

    def user_table_count(self) -> int:
        row = self.execute(dialect.USER_TABLE_COUNT).fetchone()
        return int(row[0])

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
        with map_exceptions:
            self.conn.close()  # the last connection to close checkpoints the WAL and removes it


def _wal(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def _readonly_uri(path: Path) -> str:
    """`mode=ro`; on storage we cannot write, with no log to replay, `immutable=1` as well.

    A read-only connection to a WAL database still creates `-wal` and `-shm` beside it, which
    read-only storage refuses ("unable to open database file", "attempt to write a readonly
    database"). Where we cannot write and there is no `-wal`, no writer can be live there
    either (a WAL writer keeps its log while it is open), so SQLite may treat the file as
    immutable: no locks, no side files, nothing left behind.
    """
    uri = f"{path.resolve().as_uri()}?mode=ro"
    if not os.access(path.parent, os.W_OK) and not _wal(path).exists():
        uri += "&immutable=1"
    return uri
