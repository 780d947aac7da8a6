"""The verifiable log at run time: the signing key at boot, checkpoints on an interval and at shutdown.

Checkpoints made at a seal are the proof store's (domains/proofs/handlers.py); on demand,
the CLI's (cli/log_commands.py).
"""

from __future__ import annotations

import logging
from typing import Protocol

import anyio

from colibri.chain.pipeline import Chain
from colibri.core.errors import StorageError
from colibri.core.state import Checkpointer, ServerState
from colibri.domains.log import notary as log_notary
from colibri.domains.log.appends import adopt_existing
from colibri.domains.log.keys import default_key_path, load_or_create, read_signer
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import valid_name
from colibri.runtime.config import Config
from colibri.storage import Database

log = logging.getLogger("colibri.log")


class Running(Protocol):
    """What the interval checkpoints read of the running `App` (app.py imports this module)."""

    config: Config
    state: ServerState
    chain: Chain
    ready: anyio.Event


def adopt(db: Database) -> None:
    """Log what a database written before the log existed already holds (once)."""
    with db.atomic() as conn:
        added = adopt_existing(conn)
    if added:
        log.warning("adopted %d existing record(s) and call(s) into the new verifiable log", added)


def open_notary(config: Config, db: Database) -> Notary:
    """The checkpoint signer: COLIBRI_SIGNING_KEY, or colibri.key beside the database, made on
    first boot (its verifier key is printed on stderr then)."""
    if config.signing_key is not None:
        signer = read_signer(config.signing_key)
    else:
        origin = config.log_origin or log_notary.default_origin(db)
        path = default_key_path(config.db_path)
        signer, created = load_or_create(path, origin if valid_name(origin) else "colibri")
        if created:
            log.warning(
                "created checkpoint signing key %s; verifier key: %s — move the key file off this machine's "
                "database folder (set COLIBRI_SIGNING_KEY) and keep exported checkpoints elsewhere",
                path,
                signer.verifier().key(),
            )
    log.debug("log checkpoints are signed by %s", signer.verifier().key())
    return Notary(signer, config.log_origin, config.checkpoint_export)


def checkpoint_now(db: Database, notary: Checkpointer, reason: str) -> None:
    """A checkpoint if the log grew since the last one; a failure is logged, never fatal."""
    try:
        with db.atomic() as conn:
            made = notary.make_if_grown(conn, reason)
    except (StorageError, LookupError) as exc:
        log.error("could not make a %s checkpoint: %s", reason, exc)
        return
    if made is not None:
        log.debug("%s checkpoint at size %d", reason, made.size)


async def checkpoint_every(app: Running) -> None:
    """Every COLIBRI_CHECKPOINT_INTERVAL_S, a checkpoint if the log grew; between calls only."""
    await app.ready.wait()
    while True:
        await anyio.sleep(app.config.checkpoint_interval_s)
        db, notary = app.state.db, app.state.notary
        if db is None or notary is None:
            return
        async with app.chain.lock:
            checkpoint_now(db, notary, log_notary.INTERVAL)


def checkpoint_at_shutdown(db: Database, notary: Checkpointer | None) -> None:
    if notary is not None and not db.readonly:
        checkpoint_now(db, notary, log_notary.SHUTDOWN)
