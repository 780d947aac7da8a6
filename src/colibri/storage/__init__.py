"""Storage: the database interface's implementations, their errors, and the migration runner.

Domains program against `Database` (the protocol of core/database.py); `open_database` is
the one place a backend is chosen.
"""

from pathlib import Path

from colibri.core.database import Connection, Cursor, Database, Row
from colibri.storage.migrations import Migration
from colibri.storage.sqlite import SQLiteDatabase

__all__ = ["Connection", "Cursor", "Database", "Migration", "Row", "SQLiteDatabase", "open_database"]


def open_database(path: Path, *, readonly: bool = False, sync: str = "normal") -> Database:
    """Open the store at `path` (SQLite today; the seam where another backend is chosen)."""
    return SQLiteDatabase.open(path, readonly=readonly, sync=sync)
