"""What a PostgreSQL database says of its connection, apart from transactions (database.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from colibri.storage.postgres.link import Guard, Link
from colibri.storage.postgres.urls import redact


class LinkFacts:
    """The connection, its URL (redacted wherever it is shown), its loss and its end."""

    link: Link
    url: str
    readonly: bool
    guard: Guard

    def __repr__(self) -> str:
        return f"PostgresDatabase({redact(self.url)!r}, readonly={self.readonly})"

    def __str__(self) -> str:
        return redact(self.url)

    @property
    def target(self) -> str:
        return self.url

    @property
    def conn(self) -> psycopg.Connection[Any]:
        return self.link.conn

    @contextmanager
    def without_waiting(self) -> Iterator[bool]:
        """Never: every statement is a network round trip, so calls stay off the event loop."""
        yield False

    def checkpoint_in_background(self) -> None:
        """Nothing to do: the server checkpoints its own WAL."""

    def unavailable(self) -> str | None:
        reason = self.link.reason
        return None if reason is None else f"the database connection was lost ({reason}); reconnecting"

    def reconnect(self) -> bool:
        return self.link.restore()

    def close(self) -> None:
        if not self.link.conn.closed:
            with self.guard:
                self.link.conn.close()
