"""The one database wrapper: opens SQLite with Colibri's pragmas and nests transactions.

sqlite3 errors raised while opening become `StorageError` here; inside a transaction they
propagate as they are, so the chain can report them as handler errors with their message.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from colibri.errors import StorageError
from colibri.storage.checkpointer import INTERVAL_S as CHECKPOINT_INTERVAL_S
from colibri.storage.checkpointer import Checkpointer

BUSY_TIMEOUT_MS = 10_000


class Database:
    """A SQLite connection in autocommit mode; `atomic()` opens (nested) transactions."""

    def __init__(self, conn: sqlite3.Connection, path: Path, *, readonly: bool) -> None:
        self.conn = conn
        self.path = path
        self.readonly = readonly
        self._depth = 0
        self._checkpointer: Checkpointer | None = None

    def __repr__(self) -> str:
        return f"Database({str(self.path)!r}, readonly={self.readonly})"

    @classmethod
    def open(cls, path: Path, *, readonly: bool = False, sync: str = "normal") -> Database:
        """Open (and in write mode create) the file; WAL, foreign keys and a busy timeout on."""
        path = Path(path)
        try:
            if readonly:
                if not path.is_file():
                    raise StorageError(
                        f"database file {path} does not exist; open it once in FULL to create it"
                    )
                conn = sqlite3.connect(
                    _readonly_uri(path), uri=True, isolation_level=None, check_same_thread=False
                )
            else:
                if path.is_dir():
                    raise StorageError(
                        f"database path {path} is a directory; point COLIBRI_DB_PATH at a file"
                    )
                path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
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
            raise StorageError(f"cannot open database {path}: {exc}{hint}") from exc
        return cls(conn, path, readonly=readonly)

    @contextmanager
    def atomic(self) -> Iterator[sqlite3.Connection]:
        """All or nothing: the outermost level takes the write lock at once (BEGIN IMMEDIATE),
        so two processes serialise their read-then-write steps; inner levels are savepoints."""
        depth = self._depth
        name = f"colibri_{depth}"
        self.conn.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield self.conn
        except BaseException:
            self._depth -= 1
            if depth == 0:
                self.conn.execute("ROLLBACK")
            else:
                self.conn.execute(f"ROLLBACK TO {name}")
                self.conn.execute(f"RELEASE {name}")
            raise
        self._depth -= 1
        try:
            self.conn.execute("COMMIT" if depth == 0 else f"RELEASE {name}")
        except sqlite3.Error:
            # A failed COMMIT can leave the transaction open; end it so the next one can begin.
            if depth == 0 and self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    def snapshot(self) -> AbstractContextManager[sqlite3.Connection]:
        """Several reads that see one consistent state of the file; see `snapshot`."""
        return snapshot(self.conn)

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def checkpoint_in_background(self, interval_s: float = CHECKPOINT_INTERVAL_S) -> None:
        """Move WAL checkpoints off this connection's commits (see storage/checkpointer.py)."""
        if self.readonly or self._checkpointer is not None:
            return
        self.conn.execute("PRAGMA wal_autocheckpoint = 0")
        self._checkpointer = Checkpointer(self.path, interval_s)
        self._checkpointer.start()

    def user_table_count(self) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchone()
        return int(row[0])

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.stop()
            self._checkpointer = None
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


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One deferred read transaction around several queries, so they all see the same state
    even while another process writes. It takes no write lock, so it works on a read-only
    file; inside a transaction already open, that transaction is the snapshot."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN DEFERRED")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
