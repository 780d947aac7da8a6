"""0035: a call held until a person decides (SPEC §22): the outcome `held` joins the `actions` CHECK.

A held call's own row is written whole, `held`, and logged at once: the log then proves the call
was stopped before anything reached a downstream, whatever is decided later (a decision is an
`event` row of its own, and the call, once let through, gets its usual row). The constraint is
widened as 0025 and 0030 did (audit_outcomes.py): on SQLite the table is rebuilt in one
transaction with every row's number and the AUTOINCREMENT counter kept (`SELECT *`, so a column
added before this one and not named here makes the copy fail loudly rather than vanish), on
PostgreSQL the constraint is replaced.
"""

from __future__ import annotations

from colibri.storage.audit_reasons import OUTCOMES as REASON_OUTCOMES
from colibri.storage.migrations import Migration

HELD = "held"
OUTCOMES = f"{REASON_OUTCOMES}, '{HELD}'"
NAME = "0035_actions_held"

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
            reason_message TEXT,
            issuer TEXT,
            token_id TEXT,
            via TEXT
        )""",
        "INSERT INTO actions_rebuilt SELECT * FROM actions ORDER BY sequence_no",
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
        "ALTER TABLE actions DROP CONSTRAINT actions_outcome_check",
        f"ALTER TABLE actions ADD CONSTRAINT actions_outcome_check CHECK (outcome IN ({OUTCOMES}))",
    ),
)
