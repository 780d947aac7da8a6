"""The one place where sqlite3's exceptions become Colibri's `StorageError` tree."""

from __future__ import annotations

import sqlite3
from types import TracebackType

from colibri.core.errors import StorageError
from colibri.storage import errors

# SQLite's primary result codes (the part of `sqlite_errorname` before any `_` suffix).
_BY_CODE: dict[str, type[StorageError]] = {
    "SQLITE_CONSTRAINT": errors.IntegrityError,
    "SQLITE_READONLY": errors.ReadOnlyError,
    "SQLITE_BUSY": errors.BusyError,
    "SQLITE_LOCKED": errors.BusyError,
    "SQLITE_NOTADB": errors.UnavailableError,
    "SQLITE_CORRUPT": errors.UnavailableError,
    "SQLITE_CANTOPEN": errors.UnavailableError,
    "SQLITE_PERM": errors.UnavailableError,
}


def convert(exc: sqlite3.Error) -> StorageError:
    """The `StorageError` for a sqlite3 exception, with the driver's own message."""
    message = str(exc)
    name = getattr(exc, "sqlite_errorname", None) or ""
    primary = "_".join(name.split("_")[:2])
    if primary in _BY_CODE:
        return _BY_CODE[primary](message)
    if isinstance(exc, sqlite3.IntegrityError):
        return errors.IntegrityError(message)
    # Raised by the sqlite3 module itself (no result code) when stored text is not UTF-8.
    if "could not decode" in message.lower():
        return errors.DecodeError(message)
    return errors.OperationalError(message)


class _MapExceptions:
    """`with map_exceptions:` re-raises any sqlite3 error as its `StorageError`.

    A plain class rather than a generator-based context manager: it wraps every statement,
    and one shared, stateless instance costs next to nothing per use.
    """

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, sqlite3.Error):
            raise convert(exc) from exc


map_exceptions = _MapExceptions()
