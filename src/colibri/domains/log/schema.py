"""Tables of the verifiable log (SPEC §11): entries, the stored tree, checkpoints, the log's id.

`log_entries` is the log itself: entry `idx` (0-based, commit order) holds the 32-byte entry
hash and where it came from (`kind` 'record' with `ref` = thought_records.seq, or 'action'
with `ref` = actions.sequence_no). It is written in the same transaction as its source row.

`log_nodes` stores every complete subtree of two or more leaves, keyed by its post-order
number (tree.node_id): a node gets its key when its last leaf arrives, so keys grow in
creation order and a scan in key order meets the nodes exactly as a streaming rebuild
makes them. With these a root or a proof reads O(log n) rows and an append writes on
average one; leaf hashes are not stored, they are one SHA-256 of an entry away.

`log_meta` holds the database's random id (the default checkpoint origin is
`colibri/<id>`) and whether rows written before the log existed were adopted into it.
"""

from __future__ import annotations

from colibri.storage import Migration

MIGRATIONS: list[Migration] = [
    Migration(
        "0006_verifiable_log",
        (
            """CREATE TABLE log_meta (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                database_id TEXT NOT NULL,
                adopted INTEGER NOT NULL DEFAULT 0
            )""",
            "INSERT INTO log_meta (id, database_id) VALUES (1, lower(hex(randomblob(16))))",
            """CREATE TABLE log_entries (
                idx INTEGER PRIMARY KEY,
                kind TEXT NOT NULL,
                ref INTEGER NOT NULL,
                entry_hash BLOB NOT NULL
            )""",
            "CREATE TABLE log_nodes (id INTEGER PRIMARY KEY, hash BLOB NOT NULL)",
            """CREATE TABLE log_checkpoints (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                size INTEGER NOT NULL,
                root BLOB NOT NULL,
                note TEXT NOT NULL,
                reason TEXT NOT NULL,
                session_id TEXT,
                made_at TEXT NOT NULL
            )""",
            "CREATE INDEX log_checkpoints_session ON log_checkpoints (session_id)"
            " WHERE session_id IS NOT NULL",
        ),
    ),
]
