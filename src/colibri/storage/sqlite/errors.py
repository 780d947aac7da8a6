"""The one place where sqlite3's exceptions become Colibri's `StorageError` tree."""

from __future__ import annotations

import sqlite3
from types import TracebackType

from colibri.core.errors import StorageError
from colibri.storage import errors


def convert(exc: sqlite3.Error) -> StorageError:
    """The `StorageError` for a sqlite3 exception, with the driver's own message."""
    message = str(exc)
    lowered = message.lower()
    if isinstance(exc, sqlite3.IntegrityError):
        return errors.IntegrityError(message)
    if "readonly" in lowered or "read-only" in lowered:
        return errors.ReadOnlyError(message)
    if "locked" in lowered or "busy" in lowered:
        return errors.BusyError(message)
    if "could not decode" in lowered:
        return errors.DecodeError(message)
    if "not a database" in lowered or "unable to open" in lowered or "malformed" in lowered:
        return errors.UnavailableError(message)
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
