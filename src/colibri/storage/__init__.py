"""Storage: one SQLite wrapper and the ordered, recorded migrations."""

from colibri.storage.database import Database
from colibri.storage.migrations import Migration

__all__ = ["Database", "Migration"]
