from __future__ import annotations

from colibri.storage import Migration

# `seq` is global across sessions: one hash chain over every record, assigned inside
# BEGIN IMMEDIATE so concurrent writers (even in two processes) produce one linear chain.
# No CHECK constraints on the hashed fields: a tampered row must still be readable so that
# verification can report it.
MIGRATIONS: list[Migration] = [
    Migration(
        "0004_thought_records",
        (
            """CREATE TABLE thought_records (
                seq INTEGER PRIMARY KEY,
                record_id TEXT NOT NULL UNIQUE,
                session_id TEXT NOT NULL REFERENCES audit_sessions (session_id),
                kind TEXT NOT NULL,
                content TEXT NOT NULL,
                task_id TEXT REFERENCES tasks (id),
                agent_id TEXT,
                created_at TEXT NOT NULL,
                prev_hash TEXT NOT NULL,
                hash TEXT NOT NULL
            )""",
            "CREATE INDEX thought_records_session ON thought_records (session_id, seq)",
            "CREATE INDEX thought_records_task ON thought_records (task_id, seq) WHERE task_id IS NOT NULL",
        ),
    ),
]
