"""0025: the outcomes of calls the switchboard routes (SPEC §15) join those of `colibri serve`.

A routed call can also time out (`timeout`: sent, and no answer came in time) or find nothing
routable (`unavailable`). The `actions` CHECK constraint is widened on both backends:

- SQLite cannot change a constraint in place, so the table is rebuilt in the migration's one
  transaction: the new table, every row copied with its `sequence_no`, the AUTOINCREMENT counter
  carried over (so no number is ever given twice), the old table dropped, the new one renamed.
  The copy is `SELECT *`: a column another migration added before this one makes the copy fail
  loudly (a column count mismatch) instead of being dropped.
- PostgreSQL replaces the constraint (named `actions_outcome_check` by PostgreSQL's rule).
"""

from __future__ import annotations

from colibri.storage.migrations import Migration

OUTCOMES = "'running', 'ok', 'error', 'denied', 'interrupted', 'timeout', 'unavailable'"
NAME = "0025_actions_gateway_outcomes"

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
            trace_id TEXT
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
