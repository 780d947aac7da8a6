"""Row numbers taken ahead for a batch of write calls, so that on PostgreSQL no call waits for its own.

A call's log entry names its row's `sequence_no`, so the number must be known before the call's
row is closed. Read back from the INSERT, it costs a round trip per call where the batch waits for
nothing else (storage/postgres/database.py pipelines the rest). So the first row of a batch is
inserted with the table's own number, and right after it the numbers of the rows still to come
are asked of the same sequence (`Dialect.next_serials`): that answer arrives with the first
result the batch reads anyway, and every later row is inserted with its number. Numbers come from
the sequence, never from a maximum, because a read call's row is inserted with the sequence's
default outside the write lock; they rise in call order, as the rows' own did. A number taken and
not used (a call refused before its row opened) is skipped, as a rolled-back row's always was.
"""

from __future__ import annotations

from collections import deque

from colibri.core.database import Cursor, Database
from colibri.core.identity import Identity
from colibri.storage.audit_open import OpenRow
from colibri.storage.audit_rows import open_numbered, open_running


class AheadNumbers:
    """The numbers of the write transaction open, for the rows its calls will open."""

    __slots__ = ("_after", "_asked", "_numbers")

    def __init__(self) -> None:
        self._after = 0
        self._asked: Cursor | None = None
        self._numbers: deque[int] | None = None

    def reset(self) -> None:
        """The transaction ended: its numbers are nobody's."""
        self._after, self._asked, self._numbers = 0, None, None

    def coming(self, after: int) -> None:
        """The next call of the batch runs now, and at most `after` calls follow it."""
        self._after = after

    def take(self) -> int | None:
        """A number for the row about to open, or None: insert it with the table's own."""
        if self._asked is None:
            return None
        if self._numbers is None:
            self._numbers = deque(int(row[0]) for row in self._asked.fetchall())
        return self._numbers.popleft() if self._numbers else None

    def opened(self, db: Database) -> None:
        """A row was inserted with the table's own number: ask, without waiting, for the numbers of
        the rows of the calls still to come, once per transaction."""
        if self._asked is not None or self._after <= 0:
            return
        sql = db.dialect.next_serials("actions", "sequence_no")
        if sql is not None:
            self._asked = db.execute(sql, (self._after,))

    def open(self, db: Database, row: OpenRow, who: Identity) -> None:
        """Insert `row` in the write transaction open, numbered ahead when a number was taken."""
        values = (row.correlation_id, row.tool, row.arguments, row.principal, row.started_at, row.trace_id)
        number = self.take()
        if number is not None:
            open_numbered(db, number, *values, who)
            row.number = number
            return
        row.number = open_running(db, *values, who)
        self.opened(db)
