"""How pages reach the database: one call at a time, off the event loop.

`colibri ui` owns a read-only connection (`OwnReader`); under `colibri serve --http` the pages
share the server's connection, so the runtime passes a reader that takes the chain's lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

import anyio

from colibri.core.database import Database

T = TypeVar("T")


class Reader(Protocol):
    async def read(self, work: Callable[[Database], T]) -> T:
        """Run `work` with the database in a worker thread and return what it returns."""
        ...


class OwnReader:
    """A reader over a database this process opened for the pages alone."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = anyio.Lock()

    async def read(self, work: Callable[[Database], T]) -> T:
        # One connection, one user at a time: a driver connection is not safe to share.
        async with self._lock:
            return await anyio.to_thread.run_sync(work, self._db)
