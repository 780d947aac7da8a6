"""Audit rows of calls answered outside the chain's lock, kept until they are written under it.

The system tools and refusals are answered on the event loop; their rows wait here (appended
from the event loop, taken by the worker) and are written whole, with their log entries, by
`audit_rows.write_finished`. Written inside a transaction other calls share (the chain's group commit),
they stay "unsettled" until it ends: a rollback puts them back to wait for the next attempt.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from colibri.storage.audit_rows import FinishedCall

log = logging.getLogger("colibri.audit")

# Rows waiting for the lock; beyond this (a database locked for a long time) the oldest are dropped.
MAX_LATER_ROWS = 10_000


class LaterRows:
    """The waiting rows; thread-safe (added on the event loop, taken in the worker)."""

    def __init__(self) -> None:
        self._rows: list[FinishedCall] = []
        self._unsettled: list[FinishedCall] = []
        self._lock = threading.Lock()

    def add(self, row: FinishedCall) -> None:
        with self._lock:
            self._rows.append(row)
            if len(self._rows) > MAX_LATER_ROWS:
                del self._rows[0]
                log.error("audit rows of inline calls are piling up (database unavailable); dropped one")

    def pending(self) -> bool:
        return bool(self._rows)

    def take(self) -> list[FinishedCall]:
        with self._lock:
            rows, self._rows = self._rows, []
        return rows

    def put_back(self, rows: Sequence[FinishedCall]) -> None:
        with self._lock:
            self._rows[:0] = rows[-MAX_LATER_ROWS:]

    def written_uncommitted(self, rows: Sequence[FinishedCall]) -> None:
        self._unsettled.extend(rows)

    def settle(self, committed: bool) -> None:
        rows, self._unsettled = self._unsettled, []
        if rows and not committed:
            self.put_back(rows)
