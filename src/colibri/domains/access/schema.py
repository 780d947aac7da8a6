"""The `access_tokens` table: a token's name (the principal), scope, expiry and revocation.

Only the SHA-256 of a token is kept, so the database (and every replica sharing it) can
check a token but never show one. A revoked row stays: its name appears in `actions`.
"""

from __future__ import annotations

from colibri.storage import Migration

MIGRATIONS = [
    Migration(
        "0012_access_tokens",
        (
            """CREATE TABLE access_tokens (
                name TEXT PRIMARY KEY,
                digest TEXT NOT NULL UNIQUE,
                scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),
                created_at TEXT NOT NULL,
                expires_at INTEGER,
                revoked_at TEXT
            )""",
        ),
    )
]

# The same DDL runs on PostgreSQL.
POSTGRES_MIGRATIONS = MIGRATIONS
