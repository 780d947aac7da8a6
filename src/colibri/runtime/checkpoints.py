"""The verifiable log at run time, for `colibri serve`: its settings from the configuration, the
signer at boot, checkpoints on an interval (in the chain's worker, under its lock) and at shutdown.

The work itself is `colibri.checkpointing`'s, which the switchboard's audit store shares.
Checkpoints made at a seal are the proof store's (domains/proofs/handlers.py); on demand,
the CLI's (cli/log_commands.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from colibri import checkpointing
from colibri.chain.worker import in_worker
from colibri.checkpointing import LogSettings, Runner, StoreClosed, adopt, checkpoint_at_shutdown
from colibri.core.state import Checkpointer
from colibri.runtime.config import Config
from colibri.runtime.running import Running
from colibri.storage import Database

__all__ = ["adopt", "checkpoint_at_shutdown", "checkpoint_every", "open_notary"]

T = TypeVar("T")


def log_settings(config: Config) -> LogSettings:
    return LogSettings(
        signing_key=config.signing_key,
        sqlite_path=config.db_path,
        origin=config.log_origin,
        export=config.checkpoint_export,
        witness_policy=config.witness_policy,
        interval_s=config.checkpoint_interval_s,
    )


def open_notary(config: Config, db: Database) -> Checkpointer:
    """The checkpoint signer (checkpointing/signer.py): COLIBRI_SIGNING_KEY, or colibri.key beside
    the database, made on first boot. KeyContinuityError when that key may not sign this log."""
    return checkpointing.open_notary(log_settings(config), db)


async def checkpoint_every(app: Running) -> None:
    """Every COLIBRI_CHECKPOINT_INTERVAL_S, a checkpoint if the log grew, with the witness duty
    beside it; between calls only (under the chain's lock)."""
    await app.ready.wait()
    notary = app.state.notary
    if app.state.db is None or notary is None:
        return
    await checkpointing.keep_log(notary, app.config.checkpoint_interval_s, _chain_runner(app))


def _chain_runner(app: Running) -> Runner:
    """Database work under the chain's lock, in the chain's worker thread, as a tool call does."""

    async def run(work: Callable[[Database], T]) -> T:
        async with app.chain.lock:
            db = app.state.db
            if db is None:
                raise StoreClosed("the database is closed")
            return await in_worker(work, db)

    return run
