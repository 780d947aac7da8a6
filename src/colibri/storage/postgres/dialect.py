"""PostgreSQL's SQL where backends differ: every PostgreSQL-only construct outside the DDL lives here."""

from __future__ import annotations

from typing import Final

NAME: Final = "postgres"


class PostgresDialect:
    name = NAME
    table_exists = (
        "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
    )
    table_columns = (
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position"
    )
    # No rowid: applied_at is an ISO timestamp written by one migrating process at a time.
    applied_migrations = "SELECT name FROM schema_migrations ORDER BY applied_at, name"

    pipelined = True
    like = "ILIKE"  # PostgreSQL's LIKE is case-sensitive; SQLite's is not

    def next_id(self, table: str, key: str) -> str:
        # Not nextval: a sequence is not transactional, so a refused create would burn a number that
        # SQLite (whose counter rolls back) hands out again. Read inside the write transaction, which
        # the advisory lock serialises, the maximum is unclaimed across replicas. Colibri deletes no
        # task, so the maximum is also the highest number ever given.
        return f"SELECT COALESCE(MAX({key}), 0) + 1 FROM {table}"

    def continue_counter(self, table: str, key: str) -> str | None:
        return (
            f"SELECT setval(pg_get_serial_sequence('{table}', '{key}'),"
            f" COALESCE(MAX({key}), 0) + 1, false) FROM {table}"
        )

    def next_serials(self, table: str, key: str) -> str | None:
        # Numbers of the sequence itself, so rows inserted with its default elsewhere (a read call's
        # row, opened outside the write lock) never take one of them.
        return f"SELECT nextval(pg_get_serial_sequence('{table}', '{key}')) FROM generate_series(1, ?)"

    def json_array_contains(self, column: str) -> str:
        return f"({column})::jsonb @> jsonb_build_array(?::text)"

    def as_bytes(self, expression: str) -> str:
        return f"convert_to({expression}, 'UTF8')"

    def joined(self, expression: str, separator: str) -> str:
        return f"string_agg({expression}, '{separator}')"


DIALECT = PostgresDialect()

# One key for every write transaction of a Colibri store: pg_advisory_xact_lock(key) is held to the
# end of the transaction, so read-then-write steps of all replicas run one at a time, as SQLite's
# BEGIN IMMEDIATE makes them in one file. The number is arbitrary ("colibri" in ASCII, truncated).
WRITE_LOCK_KEY: Final = 0x636F6C6962
# The SQLSTATE of a row the database refuses at its insert in place of a read the writer skipped
# (0037: a thought record's session and task): whoever sees it, the transaction must not commit.
REFUSED_AT_INSERT: Final = "CLB01"
BEGIN_WRITE = "BEGIN"
TAKE_WRITE_LOCK = f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})"
BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ"
USER_TABLE_COUNT = (
    "SELECT count(*) FROM information_schema.tables"
    " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
)
