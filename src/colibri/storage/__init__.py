"""Storage: the database interface's implementations, their errors, and the migration runner.

Domains program against `Database` (the protocol of core/database.py); `open_database` is
the one place a backend is chosen.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from colibri.core.database import Connection, Cursor, Database, Row
from colibri.storage.migrations import Migration
from colibri.storage.postgres.urls import is_postgres_url
from colibri.storage.sqlite import SQLiteDatabase

if TYPE_CHECKING:
    from colibri.storage.postgres.reader import AsyncReader

__all__ = [
    "Connection",
    "Cursor",
    "Database",
    "Migration",
    "Row",
    "SQLiteDatabase",
    "async_reader",
    "open_database",
]


def open_database(target: Path | str, *, readonly: bool = False, sync: str = "normal") -> Database:
    """Open the store at `target`: a `postgresql://` URL opens PostgreSQL, anything else a SQLite file."""
    if isinstance(target, str) and is_postgres_url(target):
        # Imported here so that a SQLite-only install never loads the PostgreSQL driver.
        from colibri.storage.postgres.database import PostgresDatabase

        return PostgresDatabase.open(target, readonly=readonly)
    return SQLiteDatabase.open(Path(target), readonly=readonly, sync=sync)


def async_reader(url: str) -> AsyncReader:
    """Reads of the PostgreSQL store at `url` awaited on the event loop (it connects at first use)."""
    from colibri.storage.postgres.reader import AsyncReader

    return AsyncReader(url)
