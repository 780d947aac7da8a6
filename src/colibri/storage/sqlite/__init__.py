"""The SQLite backend: the only package (with the offline verifier) that imports sqlite3."""

from colibri.storage.sqlite.database import SQLiteDatabase

__all__ = ["SQLiteDatabase"]
