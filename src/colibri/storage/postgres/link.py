"""The connection to the PostgreSQL server, and how it comes back when it is lost.

A replica outlives its database connection: the server restarts, a network blip, an operator's
`pg_terminate_backend`. The call that meets the loss is refused (nothing of its transaction was
committed), the link is marked lost, and it is opened again no sooner than a backoff allows
(0.1 s, doubling to 5 s), by the next call or by the runtime's reconnect duty, whichever comes
first. Meanwhile `reason` says why the store is unavailable (`/readyz` answers 503 with it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from colibri.core.errors import StorageError
from colibri.storage.errors import UnavailableError
from colibri.storage.postgres.errors import map_exceptions
from colibri.storage.postgres.rows import row_factory
from colibri.storage.postgres.urls import redact

LOCK_TIMEOUT_MS = 10_000  # as long as SQLite's busy timeout: then the writer gets a BusyError
CONNECT_TIMEOUT_S = 5
FIRST_RETRY_S, LAST_RETRY_S = 0.1, 5.0


def conninfo(url: str, *, readonly: bool) -> str:
    """`url` with Colibri's session settings."""
    options = f"-c lock_timeout={LOCK_TIMEOUT_MS}"
    if readonly:
        options += " -c default_transaction_read_only=on"
    try:
        return make_conninfo(
            url, options=options, application_name="colibri", connect_timeout=CONNECT_TIMEOUT_S
        )
    except psycopg.Error as exc:
        raise cannot_open(url, exc) from exc


def cannot_open(url: str, exc: psycopg.Error) -> UnavailableError:
    return UnavailableError(f"cannot open database {redact(url)}: {str(exc).strip()}")


def connect(url: str, *, readonly: bool) -> psycopg.Connection[Any]:
    """An autocommit connection with Colibri's session settings; `UnavailableError` if none."""
    info = conninfo(url, readonly=readonly)
    try:
        conn: psycopg.Connection[Any] = psycopg.connect(info, autocommit=True, row_factory=row_factory)
    except psycopg.Error as exc:
        raise cannot_open(url, exc) from exc
    return conn


class Backoff:
    """When a lost connection may next be opened: at once after the loss, then no sooner than
    0.1 s after a failed attempt, the wait doubling to 5 s, so a server out of reach is not
    hammered by every call."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._delay, self._next_try = FIRST_RETRY_S, 0.0

    def reset(self) -> None:
        self._delay, self._next_try = FIRST_RETRY_S, self._clock()

    def allows(self) -> bool:
        return self._clock() >= self._next_try

    def failed(self) -> None:
        self._next_try = self._clock() + self._delay
        self._delay = min(self._delay * 2, LAST_RETRY_S)

    def wait(self) -> float:
        """Seconds until the next attempt may come."""
        return max(0.0, self._next_try - self._clock())


class Link:
    """One server connection that may be lost and opened again."""

    def __init__(self, url: str, *, readonly: bool, clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self.readonly = readonly
        self.conn = connect(url, readonly=readonly)
        self.reason: str | None = None  # why the connection is lost; None while it is up
        self._backoff = Backoff(clock)

    def is_broken(self) -> bool:
        return self.conn.broken or self.conn.closed

    def lost(self, why: str) -> None:
        """The connection is gone: the next attempt may come at once, later ones back off."""
        if self.reason is None:
            self.reason = why
            self._backoff.reset()
        if not self.conn.closed:
            with map_exceptions:
                self.conn.close()

    def restore(self) -> bool:
        """Open a new connection if the old one is lost and the backoff allows; True when up."""
        if self.reason is None:
            return True
        if not self._backoff.allows():
            return False
        try:
            self.conn = connect(self.url, readonly=self.readonly)
        except UnavailableError:
            self._backoff.failed()
            return False
        self.reason = None
        return True

    def refusal(self) -> UnavailableError:
        """What a call meets while the connection is lost."""
        return UnavailableError(
            f"the connection to {redact(self.url)} was lost ({self.reason}); reconnecting "
            f"(next attempt in {self._backoff.wait():.1f} s) - nothing was written, retry the call"
        )


class Guard:
    """`with guard:` turns psycopg's errors into `StorageError`s: what `failed` makes of a
    statement's error, what `lost` makes of a lost connection (each may note it first)."""

    __slots__ = ("_failed", "_link", "_lost")

    def __init__(
        self,
        link: Link,
        lost: Callable[[psycopg.Error], UnavailableError],
        failed: Callable[[psycopg.Error], StorageError],
    ) -> None:
        self._link = link
        self._lost = lost
        self._failed = failed

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, psycopg.Error):
            if self._link.is_broken():
                raise self._lost(exc) from exc
            raise self._failed(exc) from exc
