"""Run the stages after the lock in a worker thread, so database work never blocks the event loop.

The stages are coroutines so that they compose as one chain, but past tool-lock none of them
suspends: each does its (blocking) work and awaits only the next stage. So the whole rest of the
chain is driven to completion with one `send` in a worker thread: one thread hop per call, and
the event loop stays free to answer pings, read the next message and write other replies while
a long handler or a busy SQLite wait runs (SPEC §8).

The worker is one dedicated thread: calls run one at a time anyway (the chain's lock), and
handing work to a thread that is already waiting costs about a quarter of what a pooled
`anyio.to_thread` hop does (measured: 59 vs 267 us on the 2-core test machine).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import anyio

T = TypeVar("T")

_WORKER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="colibri-chain")


async def in_worker(function: Callable[..., T], *args: object) -> T:
    """`function(*args)` in the worker thread. The caller waits for it even when cancelled, so a
    call that started always finishes (and is audited) while the lock is still held."""
    future = asyncio.get_running_loop().run_in_executor(_WORKER, function, *args)
    with anyio.CancelScope(shield=True):
        result = await future
    return result


def drive(before: Callable[[], None], awaitable: Awaitable[T]) -> T:
    """Run `before`, then `awaitable` to its end; it must not suspend (see the module docstring)."""
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
