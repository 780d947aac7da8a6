"""Tables of the decision trail: the hash-chained records and the anchor at the chain's end."""

from __future__ import annotations

from colibri.domains.trail.canonical import GENESIS_HASH
from colibri.storage import Migration

# `seq` is global across sessions: one hash chain over every record, assigned inside
# BEGIN IMMEDIATE so concurrent writers (even in two processes) produce one linear chain.
# No CHECK constraints on the hashed fields: a tampered row must still be readable so that
# verification can report it.
#
# `record_id` is generated from the hash (canonical.record_id_for), so it is stored nowhere
# and cannot be altered on its own; the unique index makes it the lookup key.
#
# `trail_head` is the chain's anchor: the seq and hash of the last record, written in the
# same transaction as the record. Without it, deleting the newest record (or rewriting it
# with a fresh hash) would leave a shorter chain that is perfectly consistent.
MIGRATIONS: list[Migration] = [
    Migration(
        "0004_thought_records",
        (
            """CREATE TABLE thought_records (
                seq INTEGER PRIMARY KEY,
                record_id TEXT GENERATED ALWAYS AS ('rec_' || substr(hash, 1, 24)) VIRTUAL,
                session_id TEXT NOT NULL REFERENCES audit_sessions (session_id),
                kind TEXT NOT NULL,
                content TEXT NOT NULL,
                task_id TEXT REFERENCES tasks (id),
                agent_id TEXT,
                created_at TEXT NOT NULL,
                prev_hash TEXT NOT NULL,
                hash TEXT NOT NULL
            )""",
            "CREATE UNIQUE INDEX thought_records_record_id ON thought_records (record_id)",
            "CREATE INDEX thought_records_session ON thought_records (session_id, seq)",
            "CREATE INDEX thought_records_task ON thought_records (task_id, seq) WHERE task_id IS NOT NULL",
            """CREATE TABLE trail_head (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                seq INTEGER NOT NULL,
                hash TEXT NOT NULL
            )""",
            f"INSERT INTO trail_head (id, seq, hash) VALUES (1, 0, '{GENESIS_HASH}')",
        ),
    ),
    # The principal the server proved for the call that wrote the record (SPEC §14), beside the
    # agent's own label `agent_id`. Not hashed: the record's hash is SPEC §5's, and the call's
    # action entry in the verifiable log names the same principal.
    Migration(
        "0013_thought_records_principal",
        ("ALTER TABLE thought_records ADD COLUMN principal TEXT NOT NULL DEFAULT 'local'",),
    ),
    # Nothing on SQLite: its writer reads the session and task before the insert, as it always did
    # (no pipeline there to spare the wait of); PostgreSQL's checks are in POSTGRES_MIGRATIONS.
    Migration("0037_thought_records_checked", ()),
]

# The same tables on PostgreSQL: BIGINT seqs, and STORED generated columns (PostgreSQL 15 has no
# VIRTUAL); the value is the same, derived from the hash, and an UPDATE of the hash recomputes it.
POSTGRES_MIGRATIONS: list[Migration] = [
    Migration(
        "0004_thought_records",
        tuple(
            statement.replace("seq INTEGER", "seq BIGINT").replace(") VIRTUAL", ") STORED")
            for statement in MIGRATIONS[0].statements
        ),
    ),
    MIGRATIONS[1],
    # 0037: the checks of a record's session (it exists, it is not sealed) and task, made by the database
    # at the insert: inside a batch of pipelined calls the writer skips reading them (records.py),
    # and a refusal (SQLSTATE CLB01, storage/postgres/dialect.REFUSED_AT_INSERT) fails the batch,
    # which the chain runs again one call at a time, reading, so each gets its own error.
    Migration(
        "0037_thought_records_checked",
        (
            """CREATE FUNCTION colibri_record_checked() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NOT EXISTS (SELECT 1 FROM audit_sessions WHERE session_id = NEW.session_id) THEN
                    RAISE EXCEPTION USING ERRCODE = 'CLB01',
                        MESSAGE = 'thought record refused: no session ' || NEW.session_id;
                END IF;
                IF EXISTS (SELECT 1 FROM session_seals WHERE session_id = NEW.session_id) THEN
                    RAISE EXCEPTION USING ERRCODE = 'CLB01',
                        MESSAGE = 'thought record refused: session ' || NEW.session_id || ' is sealed';
                END IF;
                IF NEW.task_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tasks WHERE id = NEW.task_id) THEN
                    RAISE EXCEPTION USING ERRCODE = 'CLB01',
                        MESSAGE = 'thought record refused: no task ' || NEW.task_id;
                END IF;
                RETURN NEW;
            END $$""",
            "CREATE TRIGGER thought_records_checked BEFORE INSERT ON thought_records"
            " FOR EACH ROW EXECUTE FUNCTION colibri_record_checked()",
        ),
    ),
]
