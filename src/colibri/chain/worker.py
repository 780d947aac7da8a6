"""Run the stages after the lock in a worker thread, so database work never blocks the event loop.

The stages are coroutines so that they compose as one chain, but past tool-lock none of them
suspends: each does its (blocking) work and awaits only the next stage. So the whole rest of the
chain is driven to completion with one `send` in a worker thread: one thread hop per call, and
the event loop stays free to answer pings, read the next message and write other replies while
a long handler or a busy SQLite wait runs (SPEC §8).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio.to_thread

T = TypeVar("T")


async def in_worker(before: Callable[[], None], awaitable: Awaitable[T]) -> T:
    """Run `before`, then `coroutine` to its end, in a worker thread; the caller waits, uncancelled,
    so a call that started always finishes (and is audited) even while the server shuts down."""
    return await anyio.to_thread.run_sync(_drive, before, awaitable)


def _drive(before: Callable[[], None], awaitable: Awaitable[T]) -> T:
    coroutine = awaitable.__await__()
    try:
        before()
        coroutine.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    except BaseException:
        coroutine.close()
        raise
    coroutine.close()
    raise RuntimeError("a chain stage after tool-lock suspended; those stages must not await I/O")
