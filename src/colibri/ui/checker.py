"""Where the pages' background checks run: one worker process, at a lower priority.

A chain check is pure Python hashing. In a thread of the serving process it holds the GIL for
most of its run and slows every page it shares the interpreter with (measured under `bench ui`:
a filtered board took four times as long while a pass ran). In a process of its own, niced, it
takes only the CPU the pages leave. The worker is spawned on first use (the serving process has
threads, so it is not forked) and stopped by `shutdown()` when the pages stop — at once: a
pass over a large store can take longer than a SIGTERM's grace, and its result is not wanted
any more. A worker that died is replaced at the next submission.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

T = TypeVar("T")
NICENESS = 10


def _lower_priority() -> None:
    os.nice(NICENESS)


class Checker:
    """Submits work to the one worker process, starting it when needed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def submit(self, work: Callable[..., T], *args: Any) -> Future[T]:
        """Run `work(*args)` in the worker (a module-level function; its arguments and result are
        pickled across)."""
        with self._lock:
            for _ in range(2):
                if self._pool is None:
                    context = multiprocessing.get_context("spawn")
                    self._pool = ProcessPoolExecutor(1, mp_context=context, initializer=_lower_priority)
                try:
                    return self._pool.submit(work, *args)
                except BrokenProcessPool:  # the worker died (killed, out of memory): start another
                    self._pool = None
            raise BrokenProcessPool("the background checker cannot start a worker process")

    def shutdown(self) -> None:
        """Stop the worker now: checks not started are dropped, the one running is ended."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        terminate = getattr(pool, "terminate_workers", None)  # Python 3.14 has it
        if terminate is not None:
            terminate()
            return
        # What terminate_workers does, on the worker processes the executor keeps (it forgets
        # them in shutdown, so they are taken first).
        workers = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in workers:
            process.terminate()
        for process in workers:
            process.join()


CHECKER = Checker()
