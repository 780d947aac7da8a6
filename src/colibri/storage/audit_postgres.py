"""The `actions` table on PostgreSQL: the same names as audit_log.MIGRATIONS, PostgreSQL's types."""

from __future__ import annotations

from colibri.storage.audit_identity import MIGRATIONS as IDENTITY
from colibri.storage.audit_log import MIGRATIONS
from colibri.storage.audit_outcomes import POSTGRES as GATEWAY_OUTCOMES
from colibri.storage.audit_reasons import POSTGRES as REASONS
from colibri.storage.migrations import Migration

# The same table on PostgreSQL: same names; serial keys and PostgreSQL's types.
POSTGRES_MIGRATIONS: list[Migration] = [
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
    MIGRATIONS[2],  # 0020_actions_trace_id: the same DDL on PostgreSQL
    GATEWAY_OUTCOMES,
    REASONS,
    *IDENTITY,  # the same DDL on PostgreSQL
]
