"""What a write transaction already knows about the database, so that it need not ask again.

Appends read the same few values every time: the trail's head, the log's right edge. Inside one
write transaction nobody else can change them (the transaction holds the store's write lock), so
after the first read the transaction's own writes keep them current. On PostgreSQL each read is
a network round trip taken while the lock is held; this is what spares them.

`current` lives and dies with the outermost transaction. A savepoint that rolls back restores it
as it was when the savepoint began, so it never tells of a write the database no longer holds.
Values must be immutable (replaced, never changed in place), so restoring is a shallow copy.

`hints` outlive transactions and are never trusted: a reader checks a hint against the database
(e.g. the log's tail against its last entry) and uses it only when it still holds.
"""

from __future__ import annotations

from typing import Any


class TransactionMemo:
    __slots__ = ("_saved", "current", "hints")

    def __init__(self) -> None:
        self.current: dict[str, Any] = {}
        self.hints: dict[str, Any] = {}
        self._saved: list[dict[str, Any]] = []

    def begin(self) -> None:
        self.current = {}
        self._saved.clear()

    def savepoint(self) -> None:
        self._saved.append(dict(self.current))

    def release(self) -> None:
        self._saved.pop()

    def rollback_to(self) -> None:
        self.current = self._saved.pop()

    def commit(self) -> None:
        """The transaction committed: what it knew may help the next one (as hints)."""
        self.hints.update(self.current)
        self.end()

    def end(self) -> None:
        self.current = {}
        self._saved.clear()
