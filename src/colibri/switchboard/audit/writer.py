"""The one connection to the audit store, and how every write reaches it (SPEC §15).

A call waits for its rows (the answer leaves only once they are committed), so a write costs the
call as little as the store allows:

- at once, on the event loop, in its own transaction, when nothing else uses the connection and
  the store can take the write lock without waiting (`Database.without_waiting`: SQLite). A short
  insert costs less than handing it to a thread, and the lean lane stays free of tasks;
- else in the writer's thread: writes that arrive while one is under way wait together and are
  committed in one transaction (group commit), each in its own savepoint, so one that fails
  does not take the others with it. PostgreSQL always goes this way (every statement is a
  network round trip).

`run(work)` is the checkpoints' and pins' way in (the `Runner` of colibri.checkpointing): the
connection in the writer's thread, under the same lock, with no transaction opened for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio

from colibri.checkpointing import StoreClosed
from colibri.core.database import Connection, Database
from colibri.core.errors import StorageError, WouldWait

log = logging.getLogger("colibri.switchboard")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Now(Generic[T]):
    """A write done at once, and what it returned."""

    value: T


@dataclass(slots=True)
class _Job:
    work: Callable[[Connection], Any]
    done: asyncio.Future[Any]


class Writer:
    """Every write to the audit store, at once or grouped (see the module)."""

    def __init__(self, db: Database) -> None:
        self.db: Database | None = db
        self._lock = anyio.Lock()  # held while the writer's thread uses the connection
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="colibri-audit")
        self._queue: list[_Job] = []
        self._wake = anyio.Event()

    def write(self, work: Callable[[Connection], T]) -> Now[T] | Awaitable[T]:
        """`work` in one transaction: done now (`Now`), or an awaitable of its result. Raises
        `StorageError` (now, or when awaited) when the store refuses it."""
        db = self.db
        if db is None:
            raise StoreClosed("the audit store is closed")
        if not self._queue and not self._lock.locked():
            with db.without_waiting() as refuses_to_wait:
                if refuses_to_wait:
                    try:
                        with db.atomic() as conn:
                            return Now(work(conn))
                    except WouldWait:
                        pass  # another process writes: wait for it in the thread, not here
        job = _Job(work, asyncio.get_running_loop().create_future())
        self._queue.append(job)
        self._wake.set()
        return job.done

    def submit(self, work: Callable[[Connection], object], what: str) -> None:
        """`work` written when it can be; nobody waits for it, a failure is logged."""

        def reported(done: asyncio.Future[Any]) -> None:
            if not done.cancelled() and done.exception() is not None:
                log.error("audit store: could not record %s: %s", what, done.exception())

        try:
            written = self.write(work)
        except StorageError as exc:
            log.error("audit store: could not record %s: %s", what, exc)
            return
        if isinstance(written, asyncio.Future):
            written.add_done_callback(reported)

    async def run(self, work: Callable[[Database], T]) -> T:
        """`work(db)` in the writer's thread, under the lock; StoreClosed once the store is closed."""
        async with self._lock:
            db = self.db
            if db is None:
                raise StoreClosed("the audit store is closed")
            return await self._in_thread(work, db)

    async def serve(self) -> None:
        """Commit what waits, in groups, until cancelled."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            while self._queue:
                async with self._lock:
                    await self._commit_waiting()

    async def _commit_waiting(self) -> None:
        """Under the lock: everything waiting, in one transaction; each waiter told its outcome."""
        jobs, self._queue = self._queue, []
        outcomes = await self._in_thread(self._commit, jobs)
        for job, outcome in zip(jobs, outcomes, strict=True):
            if job.done.done():
                continue
            if isinstance(outcome, BaseException):
                job.done.set_exception(outcome)
            else:
                job.done.set_result(outcome)

    def _commit(self, jobs: list[_Job]) -> list[object]:
        db = self.db
        if db is None:
            return [StoreClosed("the audit store is closed")] * len(jobs)
        outcomes: list[object] = []
        try:
            with db.atomic():
                for job in jobs:
                    try:
                        with db.atomic() as conn:  # a savepoint: a job that fails fails alone
                            outcomes.append(job.work(conn))
                    except Exception as exc:  # noqa: BLE001 - handed to its waiter, who answers with it
                        outcomes.append(exc)
        except StorageError as exc:  # the transaction itself: nothing of it was written
            return [exc] * len(jobs)
        return outcomes

    async def _in_thread(self, work: Callable[..., T], *args: object) -> T:
        future = asyncio.get_running_loop().run_in_executor(self._thread, work, *args)
        with anyio.CancelScope(shield=True):  # a write begun is finished, and its outcome known
            result = await future
        return result

    async def close(self, last: Callable[[Database], None] | None = None) -> None:
        """Run `last` (the shutdown checkpoint) once the writes waiting are done, then close."""
        async with self._lock:
            if self._queue:
                await self._commit_waiting()
            db, self.db = self.db, None
            if db is None:
                return
            try:
                if last is not None:
                    await self._in_thread(last, db)
            finally:
                await self._in_thread(db.close)
                self._thread.shutdown(wait=False)
