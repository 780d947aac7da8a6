from __future__ import annotations

from colibri.storage import Migration

MIGRATIONS: list[Migration] = [
    Migration(
        "0003_audit_sessions",
        (
            """CREATE TABLE audit_sessions (
                session_id TEXT PRIMARY KEY,
                agent_id TEXT,
                purpose TEXT,
                started_at TEXT NOT NULL
            )""",
        ),
    ),
    Migration(
        "0005_session_seals",
        (
            """CREATE TABLE session_seals (
                session_id TEXT PRIMARY KEY REFERENCES audit_sessions (session_id),
                root TEXT NOT NULL,
                leaf_count INTEGER NOT NULL,
                finalized_at TEXT NOT NULL
            )""",
        ),
    ),
]
