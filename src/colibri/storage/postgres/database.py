"""The PostgreSQL backend: one psycopg 3 connection, nested transactions, errors mapped.

Write transactions take one transaction-scoped advisory lock (dialect.TAKE_WRITE_LOCK), so
every read-then-write step (a chain append, a task number, an `expected_version` check) runs
alone across all processes sharing the database, exactly as BEGIN IMMEDIATE makes them run
on one SQLite file. A read-only open makes every transaction read-only in the server.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from colibri.core.database import Connection, Params
from colibri.storage.errors import UnavailableError
from colibri.storage.postgres import dialect
from colibri.storage.postgres.errors import map_exceptions
from colibri.storage.postgres.rows import PgCursor, row_factory, translate

LOCK_TIMEOUT_MS = 10_000  # as long as SQLite's busy timeout: then the writer gets a BusyError


def is_postgres_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
        return "postgresql://(unparsable URL)"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


class PostgresDatabase:
    """A PostgreSQL connection in autocommit mode; `atomic()` opens (nested) transactions."""

    dialect = dialect.DIALECT

    def __init__(self, conn: psycopg.Connection[Any], url: str, *, readonly: bool) -> None:
        self.conn = conn
        self.url = url
        self.path = Path(redact(url))
        self.readonly = readonly
        self._depth = 0

    def __repr__(self) -> str:
        return f"PostgresDatabase({redact(self.url)!r}, readonly={self.readonly})"

    def __str__(self) -> str:
        return redact(self.url)

    @property
    def target(self) -> str:
        return self.url

    @classmethod
    def open(cls, url: str, *, readonly: bool = False) -> PostgresDatabase:
        options = f"-c lock_timeout={LOCK_TIMEOUT_MS}"
        if readonly:
            options += " -c default_transaction_read_only=on"
        try:
            conninfo = make_conninfo(url, options=options, application_name="colibri")
            conn: psycopg.Connection[Any] = psycopg.connect(
                conninfo, autocommit=True, row_factory=row_factory
            )
        except psycopg.Error as exc:
            raise UnavailableError(f"cannot open database {redact(url)}: {str(exc).strip()}") from exc
        return cls(conn, url, readonly=readonly)

    @contextmanager
    def without_waiting(self) -> Iterator[bool]:
        """Never: every statement is a network round trip, so calls stay off the event loop."""
        yield False

    @contextmanager
    def atomic(self) -> Iterator[Connection]:
        """All or nothing: the outermost level takes the store's write lock at once, so writers of
        every replica serialise their read-then-write steps; inner levels are savepoints."""
        depth = self._depth
        name = f"colibri_{depth}"
        if depth == 0:
            self._run(dialect.BEGIN_WRITE)
            if not self.readonly:
                try:
                    self._run(dialect.TAKE_WRITE_LOCK)
                except BaseException:
                    self._run("ROLLBACK")
                    raise
        else:
            self._run(f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield self
        except BaseException:
            self._depth -= 1
            if depth == 0:
                self._run("ROLLBACK")
            else:
                self._run(f"ROLLBACK TO SAVEPOINT {name}")
                self._run(f"RELEASE SAVEPOINT {name}")
            raise
        self._depth -= 1
        self._run("COMMIT" if depth == 0 else f"RELEASE SAVEPOINT {name}")

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """One REPEATABLE READ transaction around several queries, so they all see one state; it
        takes no lock. Inside a transaction already open, that transaction is the snapshot."""
        if self.in_transaction:
            yield self
            return
        self._run(dialect.BEGIN_READ)
        try:
            yield self
        finally:
            if self.in_transaction:
                self._run("COMMIT")

    @property
    def in_transaction(self) -> bool:
        return self.conn.info.transaction_status != pq.TransactionStatus.IDLE

    def execute(self, sql: str, params: Params = ()) -> PgCursor:
        with map_exceptions:
            return PgCursor(self.conn.execute(translate(sql), params or None), self.conn)

    def executemany(self, sql: str, params: Iterable[Params]) -> PgCursor:
        with map_exceptions:
            cursor = self.conn.cursor()
            cursor.executemany(translate(sql), params)
            return PgCursor(cursor, self.conn)

    def tuples(self, sql: str, params: Params = ()) -> PgCursor:
        """Rows as plain tuples, cheaper where a query reads many rows."""
        with map_exceptions:
            cursor = psycopg.Cursor(self.conn, row_factory=psycopg.rows.tuple_row)
            cursor.execute(translate(sql), params or None)
            return PgCursor(cursor, self.conn)

    def _run(self, sql: str) -> None:
        with map_exceptions:
            self.conn.execute(sql)

    def checkpoint_in_background(self) -> None:
        """Nothing to do: the server checkpoints its own WAL."""

    def user_table_count(self) -> int:
        row = self.execute(dialect.USER_TABLE_COUNT).fetchone()
        return int(row[0])

    def close(self) -> None:
        with map_exceptions:
            self.conn.close()
