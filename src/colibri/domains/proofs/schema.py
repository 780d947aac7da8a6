"""Tables of the proof store: audit sessions, their seals, and each sealed tree for proofs."""

from __future__ import annotations

from colibri.storage import Migration

# A sealed tree is stored level by level in chunks of CHUNK node hashes (proofs/tree_store.py),
# so an inclusion proof reads one chunk per level instead of rebuilding the tree.
# `merkle_leaves` maps leaf positions back to record seqs, chunk by chunk, with the first seq
# of each chunk indexed so a record's leaf index is found by one index probe.
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
            """CREATE TABLE merkle_nodes (
                session_id TEXT NOT NULL REFERENCES session_seals (session_id),
                level INTEGER NOT NULL,
                chunk INTEGER NOT NULL,
                hashes BLOB NOT NULL,
                PRIMARY KEY (session_id, level, chunk)
            )""",
            """CREATE TABLE merkle_leaves (
                session_id TEXT NOT NULL REFERENCES session_seals (session_id),
                chunk INTEGER NOT NULL,
                first_seq INTEGER NOT NULL,
                seqs BLOB NOT NULL,
                PRIMARY KEY (session_id, chunk)
            )""",
            "CREATE INDEX merkle_leaves_first_seq ON merkle_leaves (session_id, first_seq)",
        ),
    ),
]

# The same tables on PostgreSQL: same names, BYTEA for the packed hashes and seqs.
POSTGRES_MIGRATIONS: list[Migration] = [
    MIGRATIONS[0],
    Migration(
        "0005_session_seals",
        tuple(
            statement.replace("BLOB", "BYTEA").replace("leaf_count INTEGER", "leaf_count BIGINT")
            for statement in MIGRATIONS[1].statements
        ),
    ),
]
