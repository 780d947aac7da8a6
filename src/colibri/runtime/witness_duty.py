"""The server's witness duty: one submitter per witness of the policy, for as long as it serves.

Each submitter wakes when this process signs a checkpoint (`WitnessedNotary.made` changes; read
every POLL_S, no database involved) and at least every `cap` seconds for checkpoints other
processes signed; after a failure it waits 1, 2, 4 ... seconds, never more than `cap`, which
is the checkpoint interval between 1 and 60 s: a witness that comes back is caught up within it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

import anyio

from colibri.chain.worker import in_worker
from colibri.core.database import Database
from colibri.core.errors import StorageError
from colibri.runtime.running import Running
from colibri.runtime.witnessing import Runner, Submitter, WitnessedNotary

log = logging.getLogger("colibri.witness")
T = TypeVar("T")

POLL_S = 0.25
MAX_BACKOFF_S = 60.0


async def submit_to_witnesses(app: Running) -> None:
    """Runs until cancelled; returns at once when no witness policy is set."""
    notary = app.state.notary
    if not isinstance(notary, WitnessedNotary) or notary.notary.policy is None:
        return
    from colibri.runtime.witness_http import client

    cap = min(MAX_BACKOFF_S, max(1.0, app.config.checkpoint_interval_s))
    run = _chain_runner(app)
    async with client() as http, anyio.create_task_group() as tasks:
        for witness in notary.notary.policy.witnesses:
            tasks.start_soon(_follow, Submitter(witness, run, http, notary.notary.export_dir), notary, cap)


async def _follow(submitter: Submitter, notary: WitnessedNotary, cap: float) -> None:
    delay = 0.0
    while True:
        seen = notary.made
        try:
            done = await submitter.step()
        except (StorageError, LookupError) as exc:
            log.error("witness %s: cannot read the log: %s", submitter.witness.name, exc)
            done = False
        if done:
            delay = 0.0
            with anyio.move_on_after(cap):
                while notary.made == seen:
                    await anyio.sleep(POLL_S)
        else:
            delay = min(cap, max(1.0, delay * 2))
            await anyio.sleep(delay)


def _chain_runner(app: Running) -> Runner:
    """Database work under the chain's lock, in the chain's worker thread, as a tool call does."""

    async def run(work: Callable[[Database], T]) -> T:
        async with app.chain.lock:
            db = app.state.db
            if db is None:
                raise StorageError("the database is closed")
            return await in_worker(work, db)

    return run
