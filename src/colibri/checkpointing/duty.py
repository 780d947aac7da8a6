"""Checkpoints while a program serves: on an interval while the log grows, and at shutdown; and
beside them, for as long as they run, each checkpoint's submission to the policy's witnesses.

The work on the store goes through a `Runner` (witnessing.py): each program runs it under its
own lock, off the event loop — `colibri serve` in its chain's worker, the switchboard in its
audit writer. A failed checkpoint is logged, never fatal: the next interval tries again.
"""

from __future__ import annotations

import logging
from functools import partial

import anyio

from colibri.checkpointing.witness_duty import submit_to_witnesses
from colibri.checkpointing.witnessing import Runner, StoreClosed
from colibri.core.database import Database
from colibri.core.errors import StorageError
from colibri.core.state import Checkpointer
from colibri.domains.log import notary as log_notary
from colibri.domains.log.note import NoteError

log = logging.getLogger("colibri.log")


def checkpoint_now(db: Database, notary: Checkpointer, reason: str) -> None:
    """A checkpoint if the log grew since the last one; a failure is logged, never fatal."""
    try:
        with db.atomic() as conn:
            made = notary.make_if_grown(conn, reason)
    except (StorageError, LookupError, NoteError) as exc:
        log.error("could not make a %s checkpoint: %s", reason, exc)
        return
    if made is not None:
        log.debug("%s checkpoint at size %d", reason, made.size)


def checkpoint_at_shutdown(db: Database, notary: Checkpointer | None) -> None:
    if notary is not None and not db.readonly:
        checkpoint_now(db, notary, log_notary.SHUTDOWN)


async def keep_log(notary: Checkpointer, interval_s: float, run: Runner) -> None:
    """Every `interval_s`, a checkpoint if the log grew, and the witnesses' submissions beside it;
    runs until cancelled, or until the store is closed (`run` raises StoreClosed)."""
    async with anyio.create_task_group() as duties:
        duties.start_soon(submit_to_witnesses, notary, interval_s, run)
        while True:
            await anyio.sleep(interval_s)
            try:
                await run(partial(_interval_checkpoint, notary))
            except StoreClosed:
                duties.cancel_scope.cancel()
                return


def _interval_checkpoint(notary: Checkpointer, db: Database) -> None:
    checkpoint_now(db, notary, log_notary.INTERVAL)
