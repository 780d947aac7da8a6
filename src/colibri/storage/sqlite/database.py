"""The one database wrapper: opens SQLite with Colibri's pragmas and nests transactions.

sqlite3 errors raised while opening become `StorageError` here; inside a transaction they
propagate as they are, so the chain can report them as handler errors with their message.
"""

from __future__ import annotations

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
                    f"{path.resolve().as_uri()}?mode=ro",
                    uri=True,
                    isolation_level=None,
                    check_same_thread=False,
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
            raise StorageError(f"cannot open database {path}: {exc}") from exc
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
        self.conn.execute("COMMIT" if depth == 0 else f"RELEASE {name}")

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
