"""One submission round to every witness, for `colibri checkpoint` (the server's round is witness_duty.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from colibri.checkpointing.witnessing import Runner, Submitter
from colibri.core.database import Database
from colibri.domains.log.policy import WitnessPolicy

T = TypeVar("T")


async def submit_once(db: Database, policy: WitnessPolicy, export_dir: Path | None) -> None:
    """Submit the latest checkpoint to every witness at once; each stores what it gets back."""
    from colibri.checkpointing.witness_http import client

    run = _runner(db)
    async with client() as http, anyio.create_task_group() as tasks:
        for witness in policy.witnesses:
            tasks.start_soon(Submitter(witness, run, http, export_dir).step)


def _runner(db: Database) -> Runner:
    """The command's one connection, used by one submitter at a time, off the event loop."""
    lock = anyio.Lock()

    async def run(work: Callable[[Database], T]) -> T:
        async with lock:
            return await anyio.to_thread.run_sync(work, db)

    return run
