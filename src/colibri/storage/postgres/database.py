"""The PostgreSQL backend: one psycopg 3 connection, pipelined transactions, errors mapped.

Write transactions take one transaction-scoped advisory lock (dialect.TAKE_WRITE_LOCK), so every
read-then-write step (a chain append, a task number, an `expected_version` check) runs alone across
all processes sharing the database, as BEGIN IMMEDIATE makes them run on one SQLite file. A
read-only open makes every transaction read-only in the server.

Every statement is a network round trip taken while that lock is held, so a write transaction runs
in psycopg's pipeline mode: statements whose results nobody reads yet (BEGIN, the lock, an INSERT, a
SAVEPOINT) are sent without waiting, and the connection waits only where a result is read and at
COMMIT. Inside `careful()` it also waits where a savepoint directly inside the transaction is
released, so that an error is raised, and rolled back, inside the savepoint that caused it.
Otherwise an error surfaces wherever psycopg next reads results (`errors_deferred`), and COMMIT
refuses the transaction whoever caught it (errors.Failures; PostgreSQL would answer "ROLLBACK" for
a failed one). The chain then runs its calls again, carefully. Then too, the log's inserts (and
the trail's anchor) are held and sent as one statement (held.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg import pq

from colibri.core.database import Connection, Params
from colibri.core.errors import StorageError
from colibri.storage.errors import OperationalError, UnavailableError
from colibri.storage.memo import TransactionMemo
from colibri.storage.postgres import dialect
from colibri.storage.postgres.errors import Failures, convert
from colibri.storage.postgres.held import BOTH, HeldLog
from colibri.storage.postgres.link import LOCK_TIMEOUT_MS, Guard, Link
from colibri.storage.postgres.pipelining import Pipelining
from colibri.storage.postgres.plain import LinkFacts
from colibri.storage.postgres.rows import PgCursor, translate
from colibri.storage.postgres.urls import is_postgres_url, redact

__all__ = ["LOCK_TIMEOUT_MS", "PostgresDatabase", "is_postgres_url"]


class PostgresDatabase(LinkFacts):
    """A PostgreSQL connection in autocommit mode; `atomic()` opens (nested) transactions."""

    dialect = dialect.DIALECT

    def __init__(self, link: Link, url: str, *, readonly: bool) -> None:
        self.link = link
        self.url = url
        self.path = Path(redact(url))
        self.readonly = readonly
        self.guard = Guard(link, self.connection_lost, self.statement_failed)
        self._depth = 0
        self._savepoints = 0  # numbers savepoints: a name is never reused within a transaction
        self._pipelining = Pipelining()
        self._memo = TransactionMemo()
        self._careful = False
        self._failures = Failures()  # of the open transaction
        self._held = HeldLog()

    @classmethod
    def open(cls, url: str, *, readonly: bool = False) -> PostgresDatabase:
        return cls(Link(url, readonly=readonly), url, readonly=readonly)

    @contextmanager
    def atomic(self) -> Iterator[Connection]:
        """All or nothing: the outermost level takes the store's write lock before any of its
        statements runs (sent ahead of them, held from the first round trip), so writers of every
        replica serialise their read-then-write steps; inner levels are savepoints."""
        depth = self._depth
        if depth == 0:
            self._begin()
        else:
            self._savepoints += 1
            name = f"colibri_{self._savepoints}"
            with self.guard:
                self.conn.execute(f"SAVEPOINT {name}")
            self._held.mark()
            self._memo.savepoint()
        self._depth += 1
        try:
            yield self
        except BaseException:
            self._depth -= 1
            if depth == 0:
                self._abort()
            else:
                self._rollback_to(name)
            raise
        self._depth -= 1
        if depth == 0:
            self._commit()
        else:
            self._release(name, wait=depth == 1 and self._careful)

    def _begin(self) -> None:
        self._reconnect_or_refuse()
        self._savepoints = 0
        self._failures = Failures()
        self._held.drop()
        self._memo.begin()
        try:
            with self.guard:
                self._pipelining.enter(self.conn)
                self.conn.execute(dialect.BEGIN_WRITE)
                if not self.readonly:
                    self.conn.execute(dialect.TAKE_WRITE_LOCK)
        except BaseException:
            self._abort()
            raise

    def _commit(self) -> None:
        try:
            if self._failures.rerun is not None:
                raise self._failures.rerun
            with self.guard:
                self._send_held()
                done = self.conn.execute("COMMIT")
                self._pipelining.leave()  # its Sync: one round trip for all that is still queued
            if self._failures.seen:
                self._pipelining.forget_prepared(self.conn)
            if done.statusmessage != "COMMIT":
                raise self._failures.first or OperationalError(
                    "the transaction had failed on an earlier statement and PostgreSQL rolled it "
                    "back at COMMIT: nothing of it was written"
                )
        except StorageError as exc:
            self._abort()
            # The first error tells why (a lock wait over the timeout, say), wherever it surfaced
            # and whoever caught it there; later ones only say the transaction had failed.
            first = self._failures.first
            if first is None or first is exc:
                raise
            raise first from exc
        except BaseException:
            self._abort()
            raise
        self._memo.commit()

    def _abort(self) -> None:
        """End the transaction without writing; a lost connection took it with it already."""
        self._memo.end()
        self._held.drop()
        if self.link.reason is not None:
            return  # the loss left the pipeline when it was noticed
        with self.guard:  # synced before ROLLBACK whatever was seen, else the next transaction runs in this
            self._pipelining.abandon(self.conn)
            if self.conn.info.transaction_status != pq.TransactionStatus.IDLE:
                self.conn.execute("ROLLBACK")
            self._pipelining.forget_prepared(self.conn)  # a COMMIT refused may have rolled it back

    def _rollback_to(self, name: str) -> None:
        self._memo.rollback_to()
        self._held.rollback()
        if self.link.reason is not None:
            return
        with self.guard:
            # Carefully, synced even if no error was seen yet (Pipelining.abandon): a careful call's
            # outcome stands. Else a rollback the server skips fails the transaction (Failures).
            self._pipelining.end_failed_segment(self.conn, always=self._careful)
            self.conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            self.conn.execute(f"RELEASE SAVEPOINT {name}")

    def _release(self, name: str, *, wait: bool) -> None:
        """Release the savepoint; `wait` (directly inside the transaction) for the results, so an
        error of a statement inside it is raised here, where rolling back to it contains it."""
        try:
            with self.guard:
                self.conn.execute(f"RELEASE SAVEPOINT {name}")
                if wait:
                    self._pipelining.sync()
        except BaseException:
            self._rollback_to(name)
            raise
        self._memo.release()
        self._held.release()

    def statement_failed(self, exc: psycopg.Error) -> StorageError:
        error = convert(exc)
        return self._failures.note(exc, error, deferred=self.errors_deferred) if self._depth else error

    def connection_lost(self, exc: psycopg.Error) -> UnavailableError:
        """Note the loss (whatever transaction was open is gone with it) and say so."""
        self.link.lost(str(exc).strip() or type(exc).__name__)
        self._pipelining.drop(exc)
        self._memo.end()
        self._held.drop()
        return UnavailableError(
            f"the connection to {redact(self.url)} was lost ({self.link.reason}); the transaction "
            "was not committed, nothing of it was written - retry the call"
        )

    def _reconnect_or_refuse(self) -> None:
        if self.link.reason is not None and not self.link.restore():
            raise self.link.refusal()

    @property
    def errors_deferred(self) -> bool:
        return self._depth > 0 and not self._careful and self._pipelining.pipeline is not None

    @contextmanager
    def careful(self) -> Iterator[None]:
        if self._depth:
            with self.guard:
                self._send_held()  # a careful call's error must surface in its own savepoint
        before, self._careful = self._careful, True
        try:
            yield
        finally:
            self._careful = before

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """One REPEATABLE READ transaction around several queries, so they all see one state; it
        takes no lock. Inside a transaction already open, that transaction is the snapshot."""
        if self.in_transaction:
            yield self
            return
        self._reconnect_or_refuse()
        with self.guard:
            self.conn.execute(dialect.BEGIN_READ)
        try:
            yield self
        finally:
            if self.link.reason is None and self.in_transaction:
                with self.guard:
                    self.conn.execute("COMMIT")

    @property
    def in_transaction(self) -> bool:
        if self._depth:
            return True
        return self.link.reason is None and self.conn.info.transaction_status != pq.TransactionStatus.IDLE

    @property
    def memo(self) -> dict[str, Any]:
        return self._memo.current if self._depth else {}

    @property
    def hints(self) -> dict[str, Any]:
        return self._memo.hints

    def execute(self, sql: str, params: Params = ()) -> PgCursor:
        if not self._depth:
            self._reconnect_or_refuse()
        sql = translate(sql)
        with self.guard:
            if self.errors_deferred and self._held.hold(sql, params):
                return PgCursor(self.conn.cursor(), self)  # no result: nobody reads an INSERT's
            self._send_held(sql)
            return PgCursor(self.conn.execute(sql, params or None), self)

    def _send_held(self, before: str | None = None) -> None:
        """Send the log rows held (held.py), before `before` when it names the log's tables."""
        if self._held.pending and (before is None or self._held.names_log(before)):
            self.conn.execute(BOTH, self._held.take())

    def executemany(self, sql: str, params: Iterable[Params]) -> PgCursor:
        if not self._depth:
            self._reconnect_or_refuse()
        with self.guard:
            self._send_held(sql)
            cursor = self.conn.cursor()
            cursor.executemany(translate(sql), params)
            return PgCursor(cursor, self)

    def tuples(self, sql: str, params: Params = ()) -> PgCursor:
        """Rows as plain tuples, cheaper where a query reads many rows."""
        if not self._depth:
            self._reconnect_or_refuse()
        with self.guard:
            self._send_held(sql)
            cursor = psycopg.Cursor(self.conn, row_factory=psycopg.rows.tuple_row)
            cursor.execute(translate(sql), params or None)
            return PgCursor(cursor, self)

    def await_results(self) -> None:
        """Wait for the results of the statements sent so far (a fetch does so by itself)."""
        with self.guard:
            self._pipelining.sync()

    def last_serial(self) -> int | None:
        with self.guard:
            row = self.conn.execute("SELECT lastval()").fetchone()
        return None if row is None else int(row[0])

    def user_table_count(self) -> int:
        return int(self.execute(dialect.USER_TABLE_COUNT).fetchone()[0])
