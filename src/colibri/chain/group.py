"""Group commit: the write calls waiting for the chain's lock share one transaction.

Handlers still run one at a time (SPEC §1.5), in arrival order; what they share is the
transaction's cost. The first waiting call to take the lock leads: it takes every write call
queued so far (itself among them, up to `MAX_BATCH`), opens one transaction (one BEGIN, one
cross-replica lock), runs each call's remaining stages in it, commits once, and only then are
all of them answered. Calls that arrive meanwhile queue for the next batch. A busy replica thus
takes the store's write lock and pays its commit once per batch instead of once per call, and a
lone call is a batch of one, as before.

All or nothing, per batch: a write is never committed without its audit row, and a call is
answered only after the transaction holding it committed. A lost connection or a lock wait over
the timeout rolls the whole batch back, and every call in it is refused with `retryable: true`
(`BatchFailed`): nothing of any of them was written. A handler's own failure stays its own:
dispatch rolls back its savepoint. On PostgreSQL a statement's error surfaces wherever psycopg
next reads results (statements are pipelined, storage/postgres/database.py), in another call's
savepoint or at COMMIT, so any error fails the batch there; the batch is then run again one call
at a time, each `careful()`ly, so that the call at fault gets its own error and the others their
results.

Read calls take no part in a shared transaction: a long read would hold the write lock of
every replica. A read at the front of the queue runs alone, as it always did.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from colibri.chain.errors import ChainError, HandlerError
from colibri.chain.worker import in_worker
from colibri.core.database import Database
from colibri.core.errors import StorageError, WouldWait
from colibri.core.state import ServerState
from colibri.storage.audit_log import AuditLog
from colibri.storage.errors import BusyError, UnavailableError

T = TypeVar("T")
MAX_BATCH = 64  # bounds how long the first call of a batch waits for the others' handlers


class BatchFailed(Exception):
    """The shared transaction could not commit: nothing of any call in it was written."""

    def __init__(self, cause: StorageError) -> None:
        super().__init__(str(cause))
        self.cause = cause

    def refusal(self, tool: str) -> HandlerError:
        cause = self.cause
        if isinstance(cause, BusyError):
            why = "the database is locked by another connection and stayed locked while this call waited"
        elif isinstance(cause, UnavailableError):
            why = f"the database could not be reached ({cause})"
        else:
            why = f"the database refused the transaction ({cause})"
        return HandlerError(
            f"{tool} was not run: {why}; nothing was written (neither the change nor its audit row) - "
            "retry the call",
            retryable=True,
        )


@dataclass(eq=False, slots=True)
class _Item:
    work: Callable[[], Any]
    writes: bool
    quick: bool
    done: bool = False
    result: Any = None
    error: BaseException | None = None
    taken: bool = field(default=False)

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


class GroupCommit:
    """Runs work under the chain's lock, write work batched into shared transactions."""

    def __init__(self, state: ServerState, audit: AuditLog, lock: anyio.Lock) -> None:
        self._state = state
        self._audit = audit
        self._lock = lock
        self._queue: deque[_Item] = deque()

    async def run(self, work: Callable[[], Any], *, writes: bool, quick: bool = False) -> Any:
        """`work()` under the lock, off the event loop; with `writes`, inside the shared write
        transaction. Returns its result once that transaction committed; `BatchFailed` if not."""
        item = _Item(work, writes, quick)
        self._queue.append(item)
        try:
            async with self._lock:
                while not item.done:
                    batch = self._take()
                    with anyio.CancelScope(shield=True):  # a batch taken is a batch finished
                        await self._run_batch(batch)
        except BaseException:
            if not item.taken:  # cancelled while waiting: it never ran, and never will
                self._queue.remove(item)
            raise
        return item.outcome()

    def at_once(self, work: Callable[[], T]) -> T | None:
        """`work()` in a write transaction of its own, now, on the event loop, when nothing holds the
        chain's lock and the store can take its write lock without waiting (SQLite); else None, and it
        did not run. For the rows of calls answered inline: they never wait for another call."""
        db = self._state.db
        if db is None or self._lock.locked() or self._queue or not self._audit.writes():
            return None
        with db.without_waiting() as refuses_to_wait:
            if not refuses_to_wait:  # PostgreSQL: every statement would wait on the network
                return None
            try:
                with db.atomic():
                    return work()
            except WouldWait:
                return None

    def _take(self) -> list[_Item]:
        """The next batch: the write items at the front of the queue, or one read item."""
        batch = [self._queue.popleft()]
        if batch[0].writes:
            while self._queue and self._queue[0].writes and len(batch) < MAX_BATCH:
                batch.append(self._queue.popleft())
        for item in batch:
            item.taken = True
        return batch

    async def _run_batch(self, batch: list[_Item]) -> None:
        db = self._state.db
        if not (batch[0].writes and db is not None and self._audit.writes()):
            for item in batch:  # no write transaction to share: each on its own, as it comes
                await in_worker(self._alone, item)
            return
        if len(batch) == 1 and batch[0].quick and not self._audit.pending():
            # A quick write with the store's lock free runs on the event loop, sparing two thread
            # hops; if another process holds the lock it goes to the worker to wait there.
            with db.without_waiting() as refuses_to_wait:
                if refuses_to_wait:
                    try:
                        self._shared(db, batch)
                        return
                    except WouldWait:
                        pass
        await in_worker(self._shared, db, batch)

    @staticmethod
    def _alone(item: _Item) -> None:
        try:
            item.result = item.work()
        except Exception as exc:  # noqa: BLE001 - carried to the item's own caller, raised there
            item.error = exc
        item.done = True

    def _shared(self, db: Database, batch: list[_Item]) -> None:
        """All items in one transaction; `WouldWait` (raised before it began) leaves them untouched."""
        failure = self._attempt(db, batch)
        if failure is None:
            return
        if isinstance(failure.cause, BusyError | UnavailableError):
            self._fail(batch, failure)
            return
        with db.careful():
            for item in batch:
                failure = self._attempt(db, [item])
                if failure is not None:
                    self._fail([item], failure)

    def _attempt(self, db: Database, batch: list[_Item]) -> BatchFailed | None:
        try:
            with db.atomic():
                for position, item in enumerate(batch):
                    self._audit.ahead.coming(len(batch) - position - 1)  # rows numbered ahead (PostgreSQL)
                    try:
                        item.result, item.error = item.work(), None
                    except ChainError as exc:  # refused before it wrote anything
                        item.error = exc
        except StorageError as exc:
            self._audit.settle(committed=False)
            return BatchFailed(exc)
        except WouldWait:
            raise
        except Exception as exc:  # noqa: BLE001 - a fault in one rolled back all; each caller learns it
            self._audit.settle(committed=False)
            self._fail(batch, exc)
            return None
        self._audit.settle(committed=True)
        for item in batch:
            item.done = True
        return None

    @staticmethod
    def _fail(batch: list[_Item], error: BaseException) -> None:
        for item in batch:
            item.result, item.error, item.done = None, error, True
