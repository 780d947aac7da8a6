"""The one place where psycopg's exceptions become Colibri's `StorageError` tree."""

from __future__ import annotations

from types import TracebackType

import psycopg

from colibri.core.errors import StorageError
from colibri.storage import errors
from colibri.storage.postgres.dialect import REFUSED_AT_INSERT

# SQLSTATE classes and codes (PostgreSQL manual, appendix A).
_BY_STATE: dict[str, type[StorageError]] = {
    "25006": errors.ReadOnlyError,  # read_only_sql_transaction
    "40001": errors.BusyError,  # serialization_failure
    "40P01": errors.BusyError,  # deadlock_detected
    "55P03": errors.BusyError,  # lock_not_available
    "57014": errors.BusyError,  # query_canceled (statement or lock timeout)
    "22021": errors.DecodeError,  # character_not_in_repertoire
    "3D000": errors.UnavailableError,  # invalid_catalog_name: no such database
    "28000": errors.UnavailableError,  # invalid_authorization_specification
    "28P01": errors.UnavailableError,  # invalid_password
    "57P01": errors.UnavailableError,  # admin_shutdown (also pg_terminate_backend)
    "57P02": errors.UnavailableError,  # crash_shutdown
    "57P03": errors.UnavailableError,  # cannot_connect_now (the server is starting or stopping)
}
_BY_CLASS: dict[str, type[StorageError]] = {
    "23": errors.IntegrityError,  # integrity constraint violation
    "08": errors.UnavailableError,  # connection exception
}


def convert(exc: psycopg.Error) -> StorageError:
    """The `StorageError` for a psycopg exception, with the server's own message."""
    message = str(exc).strip()
    state = exc.sqlstate or ""
    if state in _BY_STATE:
        return _BY_STATE[state](message)
    if state[:2] in _BY_CLASS:
        return _BY_CLASS[state[:2]](message)
    if isinstance(exc, psycopg.IntegrityError):
        return errors.IntegrityError(message)
    if isinstance(exc, psycopg.errors.PipelineAborted):
        # Skipped because a statement sent before it failed: that one's error is the story.
        return errors.OperationalError(f"{message}: an earlier statement of the transaction failed")
    if isinstance(exc, psycopg.OperationalError) and not state:
        # No SQLSTATE: the client lost (or never had) its connection.
        return errors.UnavailableError(message)
    return errors.OperationalError(message)


class Failures:
    """The errors of the open transaction: the first, as it surfaced (it tells why the transaction
    failed, wherever it surfaced and whoever caught it there), and `rerun`: an error after which
    the transaction must not commit even if a savepoint rolled it back.

    Where a pipelined statement's error surfaces depends on when its result reaches psycopg (it
    reads what has arrived at every later statement): in the savepoint of the call that caused it,
    in a later call's, or at COMMIT. So while errors are deferred (pipelined, outside `careful()`)
    any error fails the transaction, whoever caught it, and so does a refusal at an insert
    (`dialect.REFUSED_AT_INSERT`) anywhere: the chain then runs the calls again carefully, where
    each error surfaces in its own call's savepoint and every call gets its own outcome."""

    __slots__ = ("first", "rerun", "seen")

    def __init__(self) -> None:
        self.first: StorageError | None = None
        self.rerun: StorageError | None = None
        self.seen = False  # any error at all: psycopg's prepared statements must be forgotten

    def note(self, exc: psycopg.Error, error: StorageError, *, deferred: bool) -> StorageError:
        """Note `error`, what `exc` became; returns it."""
        self.seen = True
        if self.first is None and not isinstance(exc, psycopg.errors.PipelineAborted):
            self.first = error
        if self.rerun is None and (deferred or exc.sqlstate == REFUSED_AT_INSERT):
            self.rerun = error
        return error


class _MapExceptions:
    """`with map_exceptions:` re-raises any psycopg error as its `StorageError`."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, psycopg.Error):
            raise convert(exc) from exc


map_exceptions = _MapExceptions()
