"""A program's witness duty: one submitter per witness of the policy, for as long as it serves.

Each submitter wakes when this process signs a checkpoint (`WitnessedNotary.made` changes; read
every POLL_S, no database involved) and at least every `cap` seconds for checkpoints other
processes signed; after a failure it waits 1, 2, 4 ... seconds, never more than `cap`, which
is the checkpoint interval between 1 and 60 s: a witness that comes back is caught up within it.
"""

from __future__ import annotations

import logging

import anyio

from colibri.checkpointing.witnessing import Runner, Submitter, WitnessedNotary
from colibri.core.errors import StorageError
from colibri.core.state import Checkpointer

log = logging.getLogger("colibri.witness")

POLL_S = 0.25
MAX_BACKOFF_S = 60.0


async def submit_to_witnesses(notary: Checkpointer, interval_s: float, run: Runner) -> None:
    """Runs until cancelled; returns at once when no witness policy is set."""
    if not isinstance(notary, WitnessedNotary) or notary.notary.policy is None:
        return
    from colibri.checkpointing.witness_http import client

    cap = min(MAX_BACKOFF_S, max(1.0, interval_s))
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
