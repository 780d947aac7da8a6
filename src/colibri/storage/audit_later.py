"""Audit rows of calls answered outside the chain's lock, kept until they are written under it.

The system tools and refusals are answered on the event loop; their rows wait here (appended
from the event loop, taken by the worker) and are written whole, with their log entries, by
`write_finished`. Written inside a transaction other calls share (the chain's group commit),
they stay "unsettled" until it ends: a rollback puts them back to wait for the next attempt.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from colibri.core.database import Connection
from colibri.storage.audit_rows import FinishedCall, LogAction

log = logging.getLogger("colibri.audit")

# Rows waiting for the lock; beyond this (a database locked for a long time) the oldest are dropped.
MAX_LATER_ROWS = 10_000


class LaterRows:
    """The waiting rows; thread-safe (added on the event loop, taken in the worker)."""

    def __init__(self) -> None:
        self._rows: list[FinishedCall] = []
        self._unsettled: list[FinishedCall] = []
        self._lock = threading.Lock()

    def add(self, row: FinishedCall) -> None:
        with self._lock:
            self._rows.append(row)
            if len(self._rows) > MAX_LATER_ROWS:
                del self._rows[0]
                log.error("audit rows of inline calls are piling up (database unavailable); dropped one")

    def pending(self) -> bool:
        return bool(self._rows)

    def take(self) -> list[FinishedCall]:
        with self._lock:
            rows, self._rows = self._rows, []
        return rows

    def put_back(self, rows: Sequence[FinishedCall]) -> None:
        with self._lock:
            self._rows[:0] = rows[-MAX_LATER_ROWS:]

    def written_uncommitted(self, rows: Sequence[FinishedCall]) -> None:
        self._unsettled.extend(rows)

    def settle(self, committed: bool) -> None:
        rows, self._unsettled = self._unsettled, []
        if rows and not committed:
            self.put_back(rows)


def write_finished(conn: Connection, rows: Sequence[FinishedCall], on_finished: LogAction) -> None:
    """Insert the rows and log each. Every INSERT is sent before the first number is read, so
    on PostgreSQL all of them cost one round trip."""
    inserted = [
        conn.execute(
            "INSERT INTO actions (correlation_id, tool, arguments, outcome, result_hash,"
            " started_at, duration_ms, principal, trace_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " RETURNING sequence_no",
            _values(r),
        )
        for r in rows
    ]
    for r, cursor in zip(rows, inserted, strict=True):
        on_finished(
            conn,
            int(cursor.fetchone()[0]),
            r.correlation_id,
            r.tool,
            r.arguments,
            r.outcome,
            r.result_hash,
            r.started_at,
            r.duration_ms,
            r.principal,
        )


def _values(r: FinishedCall) -> tuple[object, ...]:
    return (r.correlation_id, r.tool, r.arguments, r.outcome, r.result_hash, r.started_at, r.duration_ms,
            r.principal, r.trace_id)  # fmt: skip
