"""The `actions` table: one row per executed call, opened `running` and closed with its outcome.

Where the mode allows no writes (READONLY, MINIMAL, or before phase 2) events go to the
debug log instead, so a read-only database stays byte-for-byte unchanged. The debug log carries
a digest of the arguments, never the arguments: they may hold secrets.

Calls answered outside the lock (the system tools, and refusals of tools a mode or a token does
not admit) must not touch the connection the worker thread uses from the event loop: their row is
kept here and written whole, under the chain's lock, in the worker. A refusal waits for its row
before it is answered; a system tool's row is written right after its answer by the flusher task
every server runs (SPEC §14: within 1 s), or by the next call that takes the lock, or at close.

A row that reaches its final outcome is handed to the verifiable log's appender (`on_finished`,
domains/log through the chain) in the same transaction, and never changes after that: closing
a row only applies to a row still `running`. The rows' SQL is audit_rows.py's, which the
switchboard's audit store shares; 0025 (audit_outcomes.py) adds the switchboard's outcomes.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from colibri.core.clock import utc_now
from colibri.core.errors import StorageError
from colibri.core.modes import writes_allowed
from colibri.core.state import ServerState
from colibri.storage import Connection, Database, Migration
from colibri.storage.audit_outcomes import SQLITE as GATEWAY_OUTCOMES
from colibri.storage.audit_rows import (
    FinishedCall,
    LogAction,
    close_running,
    insert_finished,
    mark_interrupted,
    not_logged,
    open_running,
)
from colibri.storage.errors import BusyError

__all__ = [
    "MIGRATIONS",
    "AuditLog",
    "FinishedCall",
    "LogAction",
    "close_running",
    "digest",
    "insert_finished",
    "mark_interrupted",
    "open_running",
]

log = logging.getLogger("colibri.audit")

# No secondary indexes: each one adds WAL pages to both audit writes of every call
# (measured: 53 -> 33 us per call). Correlation ids are UUID4s, unique by construction;
# the boot-time sweep of `running` rows is one scan in the background phase-2 thread.
MIGRATIONS = [
    Migration(
        "0001_actions",
        (
            """CREATE TABLE actions (
                sequence_no INTEGER PRIMARY KEY AUTOINCREMENT,
                correlation_id TEXT NOT NULL,
                tool TEXT NOT NULL,
                arguments TEXT NOT NULL,
                outcome TEXT NOT NULL
                    CHECK (outcome IN ('running', 'ok', 'error', 'denied', 'interrupted')),
                result_hash TEXT,
                started_at TEXT NOT NULL,
                duration_ms REAL
            )""",
        ),
    ),
    # Who made the call, as the server proved it (SPEC §9): rows from before it were stdio's.
    Migration(
        "0012_actions_principal",
        ("ALTER TABLE actions ADD COLUMN principal TEXT NOT NULL DEFAULT 'local'",),
    ),
    # The OpenTelemetry trace of the call (SPEC §17), when it was traced; not part of its log entry.
    Migration("0020_actions_trace_id", ("ALTER TABLE actions ADD COLUMN trace_id TEXT",)),
    GATEWAY_OUTCOMES,  # timeout and unavailable, for the switchboard's calls (audit_outcomes.py)
]


# Rows waiting for the lock; beyond this (a database locked for a long time) the oldest are dropped.
MAX_LATER_ROWS = 10_000


def digest(arguments: str) -> str:
    """What the debug log shows of a call's arguments: enough to match calls, nothing to read."""
    return "sha256:" + hashlib.sha256(arguments.encode()).hexdigest()[:16]


class AuditLog:
    """Writes audit events for the chain; raises `StorageError` for the stage to report."""

    def __init__(self, state: ServerState, on_finished: LogAction = not_logged) -> None:
        self._state = state
        self._on_finished = on_finished
        self._later: list[FinishedCall] = []
        self._later_lock = threading.Lock()  # appended on the event loop, flushed in a worker

    def _db(self) -> Database | None:
        state = self._state
        return state.db if state.db is not None and writes_allowed(state.mode) else None

    def writes(self) -> bool:
        """True when events go to the database (else to the debug log)."""
        return self._db() is not None

    def enter(
        self,
        correlation_id: str,
        tool: str,
        arguments: str,
        principal: str,
        started_at: str | None = None,
        *,
        trace_id: str | None = None,
    ) -> int | None:
        db = self._db()
        if db is None:
            log.debug(
                "audit-enter %s %s arguments=%s by %s", tool, correlation_id, digest(arguments), principal
            )
            return None
        return open_running(db, correlation_id, tool, arguments, principal, started_at or utc_now(), trace_id)

    def exit(self, sequence_no: int | None, outcome: str, result_hash: str, duration_ms: float) -> None:
        db = self._db()
        if db is None or sequence_no is None:
            log.debug("audit-exit #%s %s %s %.3fms", sequence_no, outcome, result_hash, duration_ms)
            return
        with _transaction(db) as conn:
            close_running(conn, sequence_no, outcome, result_hash, duration_ms, self._on_finished)

    def denied(self, correlation_id: str, tool: str, principal: str, trace_id: str | None = None) -> bool:
        """A refusal is decided on the event loop, outside the lock: its row waits for `flush_later`,
        which the refusing stage runs before it answers. True when the row waits."""
        if self._db() is None:
            log.debug("audit-denied %s %s by %s", tool, correlation_id, principal)
            return False
        row = FinishedCall(correlation_id, tool, "null", "denied", None, utc_now(), 0.0, principal, trace_id)
        return self.later(row)

    def later(self, row: FinishedCall) -> bool:
        """Keep the row of a call answered outside the lock; True when it waits for `flush_later`."""
        if self._db() is None:
            log.debug(
                "audit %s %s arguments=%s outcome=%s %s %.3fms",
                row.tool,
                row.correlation_id,
                digest(row.arguments),
                row.outcome,
                row.result_hash,
                row.duration_ms,
            )
            return False
        with self._later_lock:
            self._later.append(row)
            if len(self._later) > MAX_LATER_ROWS:
                del self._later[0]
                log.error("audit rows of inline calls are piling up (database unavailable); dropped one")
        return True

    def pending(self) -> bool:
        return bool(self._later)

    def flush_later(self) -> None:
        """Write the kept rows in one transaction; on failure keep them for the next attempt.
        Blocks on the database: call it under the chain's lock, off the event loop."""
        db = self._db()
        with self._later_lock:
            rows, self._later = self._later, []
        if db is None or not rows:
            return
        try:
            with db.atomic() as conn:
                for row in rows:
                    insert_finished(conn, row, self._on_finished)
        except StorageError as exc:
            if not isinstance(exc, BusyError):
                log.error("audit sink failed writing %d row(s) of inline calls: %s", len(rows), exc)
                return
            log.warning("database busy: %d audit row(s) of inline calls wait for the next try", len(rows))
            with self._later_lock:
                self._later[:0] = rows[-MAX_LATER_ROWS:]


@contextmanager
def _transaction(db: Database) -> Iterator[Connection]:
    """The write tool's transaction when audit-exit runs inside it (audit-enter opened it), else a
    new one: the row and its log entry commit together."""
    if db.in_transaction:
        yield db
    else:
        with db.atomic() as conn:
            yield conn
