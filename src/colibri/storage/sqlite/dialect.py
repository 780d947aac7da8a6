"""SQLite's SQL where backends differ: every SQLite-only construct outside the DDL lives here."""

from __future__ import annotations

from typing import Final

NAME: Final = "sqlite"


class SQLiteDialect:
    name = NAME
    table_exists = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    applied_migrations = "SELECT name FROM schema_migrations ORDER BY rowid"
    table_columns = "SELECT name FROM pragma_table_info(?)"

    def next_id(self) -> str:
        # AUTOINCREMENT keeps its counter in sqlite_sequence (no row until the first insert).
        return "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = ?), 0) + 1"

    def json_array_contains(self, column: str) -> str:
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = ?)"

    def as_bytes(self, expression: str) -> str:
        return f"CAST({expression} AS BLOB)"


DIALECT = SQLiteDialect()

# Statements the SQLite backend itself runs (schema inspection, transactions).
BEGIN_WRITE = "BEGIN IMMEDIATE"  # take the write lock at once: read-then-write steps serialise
BEGIN_READ = "BEGIN DEFERRED"
TABLE_NAMES = "SELECT name FROM sqlite_master WHERE type = 'table'"
USER_TABLE_COUNT = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
