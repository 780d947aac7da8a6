"""What can go wrong with a database, whatever the backend; drivers' errors become these.

StorageError (core/errors.py)     the database could not be opened, migrated or used
├── UnavailableError              cannot open: no file, a directory, no permission, not a database
├── SchemaError                   the schema is not what this code needs (missing migrations)
├── BusyError                     another writer held the lock past the busy timeout
├── ReadOnlyError                 a write reached a database opened read-only
├── IntegrityError                a constraint refused the write
├── DecodeError                   a stored value is not valid text (only a tampered row)
└── OperationalError              anything else the driver reported

Each backend converts its driver's exceptions in one context manager (for SQLite,
`storage/sqlite/errors.py`), chained with `from`, keeping the driver's message.
"""

from __future__ import annotations

from colibri.core.errors import StorageError

__all__ = [
    "BusyError",
    "DecodeError",
    "IntegrityError",
    "OperationalError",
    "ReadOnlyError",
    "SchemaError",
    "StorageError",
    "UnavailableError",
]


class UnavailableError(StorageError):
    """The database cannot be opened: no file, a directory, no permission, not a database."""


class SchemaError(StorageError):
    """The schema is not what this code needs (missing migrations, or not Colibri's)."""


class BusyError(StorageError):
    """Another writer held the lock longer than the busy timeout."""


class ReadOnlyError(StorageError):
    """A write reached a database that is open read-only."""


class IntegrityError(StorageError):
    """A constraint (unique, foreign key, check, not null) refused the write."""


class DecodeError(StorageError):
    """A stored value is not valid text; only a row altered outside Colibri holds one."""


class OperationalError(StorageError):
    """Anything else the driver reported."""
