"""SQLite's SQL where backends differ: every SQLite-only construct outside the DDL lives here."""

from __future__ import annotations

from typing import Final

NAME: Final = "sqlite"


class SQLiteDialect:
    name = NAME
    table_exists = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    applied_migrations = "SELECT name FROM schema_migrations ORDER BY rowid"
    table_columns = "SELECT name FROM pragma_table_info(?)"

    pipelined = False
    like = "LIKE"  # SQLite's LIKE ignores the case of ASCII letters

    def next_id(self, table: str, key: str) -> str:
        # AUTOINCREMENT keeps its counter in sqlite_sequence (no row until the first insert).
        return f"SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = '{table}'), 0) + 1"

    def continue_counter(self, table: str, key: str) -> str | None:
        return None  # an explicit key above sqlite_sequence's value raises it

    def next_serials(self, table: str, key: str) -> str | None:
        return None

    def json_array_contains(self, column: str) -> str:
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = ?)"

    def as_bytes(self, expression: str) -> str:
        return f"CAST({expression} AS BLOB)"

    def joined(self, expression: str, separator: str) -> str:
        return f"group_concat({expression}, '{separator}')"


DIALECT = SQLiteDialect()

# Statements the SQLite backend itself runs (schema inspection, transactions).
BEGIN_WRITE = "BEGIN IMMEDIATE"  # take the write lock at once: read-then-write steps serialise
BEGIN_READ = "BEGIN DEFERRED"
TABLE_NAMES = "SELECT name FROM sqlite_master WHERE type = 'table'"
USER_TABLE_COUNT = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
