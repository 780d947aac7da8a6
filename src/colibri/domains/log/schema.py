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

`log_checkpoints.verifier_key` (0016) is the verifier key of the key that signed each
checkpoint, so a boot with another signing key can be refused naming both (SPEC §14); rows
signed before the column existed keep NULL, and their note's signature line stands in.

`log_cosignatures` (0017) holds each witness's cosignature line on a stored checkpoint (its
`cosigned_at` is the cosignature's own timestamp), and `log_witnesses` each witness's last
submission attempt and error, for `colibri checkpoint --status` (SPEC §16).
"""

from __future__ import annotations

from colibri.storage import Migration

KEYS = Migration("0016_log_checkpoint_keys", ("ALTER TABLE log_checkpoints ADD COLUMN verifier_key TEXT",))


def _witnesses(big: str) -> Migration:
    """0017: witnesses' cosignatures on stored checkpoints, and each witness's last submission."""
    return Migration(
        "0017_log_witnesses",
        (
            f"""CREATE TABLE log_cosignatures (
                checkpoint_id {big} NOT NULL,
                witness_key TEXT NOT NULL,
                line TEXT NOT NULL,
                cosigned_at {big} NOT NULL,
                PRIMARY KEY (checkpoint_id, witness_key)
            )""",
            """CREATE TABLE log_witnesses (
                witness_key TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                url TEXT,
                last_attempt_at TEXT,
                last_error TEXT
            )""",
        ),
    )


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
    KEYS,
    _witnesses("INTEGER"),
]

# The same tables on PostgreSQL: BYTEA hashes, BIGINT indexes, a serial checkpoint id; the
# database id is 32 random hex digits as on SQLite (gen_random_uuid is built in since PostgreSQL 13).
POSTGRES_MIGRATIONS: list[Migration] = [
    Migration(
        "0006_verifiable_log",
        (
            MIGRATIONS[0].statements[0],
            "INSERT INTO log_meta (id, database_id) VALUES (1, replace(gen_random_uuid()::text, '-', ''))",
            """CREATE TABLE log_entries (
                idx BIGINT PRIMARY KEY,
                kind TEXT NOT NULL,
                ref BIGINT NOT NULL,
                entry_hash BYTEA NOT NULL
            )""",
            "CREATE TABLE log_nodes (id BIGINT PRIMARY KEY, hash BYTEA NOT NULL)",
            """CREATE TABLE log_checkpoints (
                id BIGSERIAL PRIMARY KEY,
                size BIGINT NOT NULL,
                root BYTEA NOT NULL,
                note TEXT NOT NULL,
                reason TEXT NOT NULL,
                session_id TEXT,
                made_at TEXT NOT NULL
            )""",
            MIGRATIONS[0].statements[5],
        ),
    ),
    KEYS,  # the same statement on both backends
    _witnesses("BIGINT"),
]
