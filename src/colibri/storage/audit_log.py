"""The `actions` table: one row per executed call, opened `running` and closed with its outcome.

Where the mode allows no writes (READONLY, MINIMAL, or before phase 2) events go to the
debug log instead, so a read-only database stays byte-for-byte unchanged.
"""

from __future__ import annotations

import logging

from colibri.core.clock import utc_now
from colibri.core.modes import writes_allowed
from colibri.core.state import ServerState
from colibri.storage import Database, Migration

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
]


# The same table on PostgreSQL: same names; serial keys and PostgreSQL's types.
POSTGRES_MIGRATIONS = [
    Migration(
        "0001_actions",
        (
            """CREATE TABLE actions (
                sequence_no BIGSERIAL PRIMARY KEY,
                correlation_id TEXT NOT NULL,
                tool TEXT NOT NULL,
                arguments TEXT NOT NULL,
                outcome TEXT NOT NULL
                    CHECK (outcome IN ('running', 'ok', 'error', 'denied', 'interrupted')),
                result_hash TEXT,
                started_at TEXT NOT NULL,
                duration_ms DOUBLE PRECISION
            )""",
        ),
    ),
    MIGRATIONS[1],
]


class AuditLog:
    """Writes audit events for the chain; raises `StorageError` for the stage to report."""

    def __init__(self, state: ServerState) -> None:
        self._state = state

    def _db(self) -> Database | None:
        state = self._state
        return state.db if state.db is not None and writes_allowed(state.mode) else None

    def enter(self, correlation_id: str, tool: str, arguments: str, principal: str) -> int | None:
        db = self._db()
        if db is None:
            log.debug("audit-enter %s %s %s by %s", tool, correlation_id, arguments, principal)
            return None
        cursor = db.execute(
            "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at, principal)"
            " VALUES (?, ?, ?, 'running', ?, ?)",
            (correlation_id, tool, arguments, utc_now(), principal),
        )
        return cursor.lastrowid

    def exit(self, sequence_no: int | None, outcome: str, result_hash: str, duration_ms: float) -> None:
        db = self._db()
        if db is None or sequence_no is None:
            log.debug("audit-exit #%s %s %s %.3fms", sequence_no, outcome, result_hash, duration_ms)
            return
        db.execute(
            "UPDATE actions SET outcome = ?, result_hash = ?, duration_ms = ? WHERE sequence_no = ?",
            (outcome, result_hash, duration_ms, sequence_no),
        )

    def denied(self, correlation_id: str, tool: str, principal: str) -> None:
        db = self._db()
        if db is None:
            log.debug("audit-denied %s %s by %s", tool, correlation_id, principal)
            return
        db.execute(
            "INSERT INTO actions"
            " (correlation_id, tool, arguments, outcome, started_at, duration_ms, principal)"
            " VALUES (?, ?, 'null', 'denied', ?, 0, ?)",
            (correlation_id, tool, utc_now(), principal),
        )


def mark_interrupted(db: Database) -> int:
    """Rows left `running` by a process that died can never finish: say so."""
    with db.atomic() as conn:
        return conn.execute("UPDATE actions SET outcome = 'interrupted' WHERE outcome = 'running'").rowcount
