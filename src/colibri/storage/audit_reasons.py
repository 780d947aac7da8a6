"""0030: why a call was refused (SPEC §21), and the switchboard's own events as outcome `event`.

`actions` gains `reason` (a code of core/reasons.py: `scope`, `policy:<name>`, `rate_limit`, ...)
and `reason_message` (its one-line message), both NULL for a call that was not refused. They are
columns of the row, not fields of its log entry: the entry's format is fixed (SPEC §11). The
outcome `event` (a pin recorded, an approval) joins the CHECK constraint, rebuilt as 0025 did
(audit_outcomes.py): on SQLite the table is rebuilt in one transaction with its numbers kept, on
PostgreSQL the constraint is replaced.
"""

from __future__ import annotations

from colibri.storage.audit_outcomes import OUTCOMES as GATEWAY_OUTCOMES
from colibri.storage.migrations import Migration

OUTCOMES = f"{GATEWAY_OUTCOMES}, 'event'"
NAME = "0030_actions_reason"
_KEPT = (
    "sequence_no, correlation_id, tool, arguments, outcome, result_hash, started_at, duration_ms, principal,"
    " trace_id"
)

SQLITE = Migration(
    NAME,
    (
        f"""CREATE TABLE actions_rebuilt (
            sequence_no INTEGER PRIMARY KEY AUTOINCREMENT,
            correlation_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            arguments TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ({OUTCOMES})),
            result_hash TEXT,
            started_at TEXT NOT NULL,
            duration_ms REAL,
            principal TEXT NOT NULL DEFAULT 'local',
            trace_id TEXT,
            reason TEXT,
            reason_message TEXT
        )""",
        f"INSERT INTO actions_rebuilt ({_KEPT}) SELECT {_KEPT} FROM actions ORDER BY sequence_no",
        "DELETE FROM sqlite_sequence WHERE name = 'actions_rebuilt'",
        "INSERT INTO sqlite_sequence (name, seq) SELECT 'actions_rebuilt', seq FROM sqlite_sequence"
        " WHERE name = 'actions'",
        "DROP TABLE actions",
        "ALTER TABLE actions_rebuilt RENAME TO actions",
    ),
)

POSTGRES = Migration(
    NAME,
    (
        "ALTER TABLE actions ADD COLUMN reason TEXT",
        "ALTER TABLE actions ADD COLUMN reason_message TEXT",
        "ALTER TABLE actions DROP CONSTRAINT actions_outcome_check",
        f"ALTER TABLE actions ADD CONSTRAINT actions_outcome_check CHECK (outcome IN ({OUTCOMES}))",
    ),
)
