"""The `actions` table: one row per executed call, opened `running` and closed with its outcome.

Where the mode allows no writes (READONLY, MINIMAL, or before phase 2) events go to the
debug log instead, so a read-only database stays byte-for-byte unchanged. The debug log carries
a digest of the arguments, never the arguments: they may hold secrets.

Calls answered outside the lock (the system tools, and refusals of tools a mode or a token does
not admit) must not touch the connection the worker thread uses from the event loop: their row is
written whole (`write_row`) under the chain's lock, or kept here for later. A refusal waits for its
row before it is answered; a system tool's row is written before its answer only when nothing holds
the lock and the store's write lock is free (chain/group.py's `at_once`), else right after it by the
flusher task every server runs (SPEC §14: within 1 s), or by the next call that takes the lock.

A row that reaches its final outcome is handed to the verifiable log's appender (`on_finished`,
domains/log through the chain) in the same transaction, and never changes after that: closing
a row only applies to a row still `running`. What the appender returns (the entry's receipt,
SPEC §22) comes back from `close_row`, `exit` and `write_row`, to be shown once the row committed.
The rows' SQL is audit_rows.py's, which the switchboard's audit store shares; 0025
(audit_outcomes.py) adds the switchboard's outcomes.

The chain opens and closes a write tool's row inside the transaction that holds its writes
(`open_row` / `close_row`): nobody else can see or sweep that row before it commits, so closing
it needs no check, and on PostgreSQL neither statement waits for the server (the row's number,
which the log entry needs, arrives with the next result the call reads anyway).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from colibri.core.clock import utc_now
from colibri.core.errors import StorageError
from colibri.core.identity import Identity, identity_of
from colibri.core.modes import writes_allowed
from colibri.core.state import ServerState
from colibri.storage import Connection, Database, Migration
from colibri.storage.audit_ahead import AheadNumbers
from colibri.storage.audit_identity import MIGRATIONS as IDENTITY
from colibri.storage.audit_later import LaterRows
from colibri.storage.audit_open import OpenRow, digest
from colibri.storage.audit_outcomes import SQLITE as GATEWAY_OUTCOMES
from colibri.storage.audit_reasons import SQLITE as REASONS
from colibri.storage.audit_rows import (
    FinishedCall,
    Kept,
    LogAction,
    close_running,
    insert_finished,
    log_finished,
    mark_interrupted,
    not_logged,
    open_running,
    write_finished,
)
from colibri.storage.errors import BusyError

__all__ = [
    "EVENT",
    "MIGRATIONS",
    "AuditLog",
    "FinishedCall",
    "Kept",
    "LogAction",
    "OpenRow",
    "close_running",
    "digest",
    "insert_finished",
    "mark_interrupted",
    "open_running",
]

log = logging.getLogger("colibri.audit")

EVENT = "event"  # the outcome of a row that records no call: the switchboard's own doing (a pin, an approval)

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
    REASONS,  # reason and reason_message of a refusal, and the outcome event (audit_reasons.py)
    *IDENTITY,  # issuer, token_id, via: what proved the caller (audit_identity.py, SPEC §20)
]


class AuditLog:
    """Writes audit events for the chain; raises `StorageError` for the stage to report."""

    def __init__(self, state: ServerState, on_finished: LogAction = not_logged) -> None:
        self._state = state
        self._on_finished = on_finished
        self._later = LaterRows()
        self.ahead = AheadNumbers()  # told by the group how many calls follow

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
        principal: str | Identity,
        started_at: str | None = None,
        *,
        trace_id: str | None = None,
    ) -> int | None:
        return self.open_row(
            correlation_id, tool, arguments, principal, started_at, trace_id=trace_id
        ).sequence_no

    def open_row(
        self,
        correlation_id: str,
        tool: str,
        arguments: str,
        principal: str | Identity,
        started_at: str | None = None,
        *,
        trace_id: str | None = None,
    ) -> OpenRow:
        """Insert the call's `running` row, with its caller's issuer and token_id (SPEC §20); its number
        is read only when first needed."""
        who = identity_of(principal)
        principal, at = who.principal, started_at or utc_now()
        row = OpenRow(correlation_id, tool, arguments, principal, at, False, None, trace_id)
        db = self._db()
        if db is None:
            log.debug(
                "audit-enter %s %s arguments=%s by %s", tool, correlation_id, digest(arguments), principal
            )
            return row
        row.in_transaction = db.in_transaction
        if row.in_transaction and db.dialect.pipelined:
            self.ahead.open(db, row, who)  # a batch's rows, numbered ahead (audit_ahead.py)
            return row
        row.number = open_running(db, correlation_id, tool, arguments, principal, at, trace_id, who)
        if not db.dialect.pipelined:
            row.sequence_no  # noqa: B018 - read now: an unread INSERT ... RETURNING blocks SQLite
        return row

    def close_row(self, row: OpenRow | None, outcome: str, result_hash: str, duration_ms: float) -> object:
        """Close a row `open_row` opened (None: it could not be opened). Opened in the transaction
        still open, it is this call's own and still running: no need to ask what it holds. Returns
        what the log's appender returned (the entry's receipt), None when nothing was logged."""
        db = self._db()
        if row is None or db is None or row.number is None or not (row.in_transaction and db.in_transaction):
            return self.exit(None if row is None else row.sequence_no, outcome, result_hash, duration_ms)
        sequence_no = row.sequence_no
        assert sequence_no is not None
        db.execute(
            "UPDATE actions SET outcome = ?, result_hash = ?, duration_ms = ? WHERE sequence_no = ?",
            (outcome, result_hash, duration_ms, sequence_no),
        )
        closed = FinishedCall(
            row.correlation_id,
            row.tool,
            row.arguments,
            outcome,
            result_hash,
            row.started_at,
            duration_ms,
            row.principal,
        )
        return log_finished(db, sequence_no, closed, self._on_finished)

    def exit(self, sequence_no: int | None, outcome: str, result_hash: str, duration_ms: float) -> object:
        db = self._db()
        if db is None or sequence_no is None:
            log.debug("audit-exit #%s %s %s %.3fms", sequence_no, outcome, result_hash, duration_ms)
            return None
        kept = Kept(self._on_finished)
        with _transaction(db) as conn:
            close_running(conn, sequence_no, outcome, result_hash, duration_ms, kept)
        return kept.value

    def denied(self, correlation_id: str, tool: str, principal: str | Identity, trace_id: str | None = None,
               *, reason: str | None = None, message: str | None = None) -> bool:  # fmt: skip
        """Keep a refusal's row (`denied_row`) for `flush_later`; True when it waits."""
        row = self.denied_row(correlation_id, tool, principal, trace_id, reason=reason, message=message)
        return row is not None and self.later(row)

    def denied_row(
        self,
        correlation_id: str,
        tool: str,
        principal: str | Identity,
        trace_id: str | None = None,
        *,
        reason: str | None = None,
        message: str | None = None,
    ) -> FinishedCall | None:
        """The row of a refusal, decided on the event loop, outside the lock: the refusing stage writes
        it (`write_row`, under the lock) before it answers, or keeps it (`later`). None when rows go
        to the debug log. `reason` and `message` say why (core/reasons.py)."""
        who = identity_of(principal)
        if self._db() is None:
            log.debug("audit-denied %s %s by %s (%s)", tool, correlation_id, who.principal, reason)
            return None
        return FinishedCall(correlation_id, tool, "null", "denied", None, utc_now(), 0.0, who.principal,
                            trace_id, reason, message, who.issuer, who.token_id, who.via)  # fmt: skip

    def write_row(self, row: FinishedCall) -> object:
        """Write a finished call's row whole with its log entry, in the transaction open (a savepoint)
        or one of its own; returns what the log's appender returned (the entry's receipt)."""
        db = self._db()
        if db is None:
            self.later(row)  # to the debug log
            return None
        kept = Kept(self._on_finished)
        with db.atomic() as conn:
            insert_finished(conn, row, kept)
        return kept.value

    def later(self, row: FinishedCall) -> bool:
        """Keep the row of a call answered outside the lock; True when it waits for `flush_later`."""
        if self._db() is None:
            log.debug("audit %s %s arguments=%s outcome=%s %s %.3fms", row.tool, row.correlation_id,
                      digest(row.arguments), row.outcome, row.result_hash, row.duration_ms)  # fmt: skip
            return False
        self._later.add(row)
        return True

    def pending(self) -> bool:
        return self._later.pending()

    def flush_later(self) -> None:
        """Write the kept rows in one transaction (the one open, if any); on failure keep them for
        the next attempt. Blocks on the database: call it under the chain's lock, off the event loop."""
        db = self._db()
        rows = self._later.take()
        if db is None or not rows:
            return
        if db.in_transaction:
            # A transaction other calls share: if it fails (here or anywhere), the group puts the
            # rows back when it settles, so the error is theirs to see, not ours to swallow.
            self._later.written_uncommitted(rows)
            with db.atomic() as conn:
                write_finished(conn, rows, self._on_finished)
            return
        try:
            with db.atomic() as conn:
                write_finished(conn, rows, self._on_finished)
        except StorageError as exc:
            if not isinstance(exc, BusyError):
                log.error("audit sink failed writing %d row(s) of inline calls: %s", len(rows), exc)
                return
            log.warning("database busy: %d audit row(s) of inline calls wait for the next try", len(rows))
            self._later.put_back(rows)

    def settle(self, committed: bool) -> None:
        """The shared transaction ended: rows it wrote are done, or wait again if it rolled back."""
        self._later.settle(committed)
        self.ahead.reset()


@contextmanager
def _transaction(db: Database) -> Iterator[Connection]:
    """The write tool's transaction when audit-exit runs inside it (audit-enter opened it), else a
    new one: the row and its log entry commit together."""
    if db.in_transaction:
        yield db
    else:
        with db.atomic() as conn:
            yield conn
