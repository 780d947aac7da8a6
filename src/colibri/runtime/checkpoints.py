"""The verifiable log at run time: the signing key at boot, checkpoints on an interval and at shutdown.

Checkpoints made at a seal are the proof store's (domains/proofs/handlers.py); on demand,
the CLI's (cli/log_commands.py).
"""

from __future__ import annotations

import logging
from pathlib import Path

import anyio

from colibri.core.errors import StorageError
from colibri.core.state import Checkpointer
from colibri.domains.log import continuity
from colibri.domains.log import notary as log_notary
from colibri.domains.log.appends import adopt_existing
from colibri.domains.log.continuity import KeyContinuityError
from colibri.domains.log.keys import default_key_path, load_or_create, read_signer
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import NoteError, valid_name
from colibri.domains.log.policy import read_policy
from colibri.domains.log.store import latest_checkpoint
from colibri.runtime.config import Config
from colibri.runtime.running import Running
from colibri.runtime.witness_duty import submit_to_witnesses
from colibri.runtime.witnessing import WitnessedNotary
from colibri.storage import Database

log = logging.getLogger("colibri.log")


def adopt(db: Database) -> None:
    """Log what a database written before the log existed already holds (once)."""
    with db.atomic() as conn:
        added = adopt_existing(conn)
    if added:
        log.warning("adopted %d existing record(s) and call(s) into the new verifiable log", added)


def open_notary(config: Config, db: Database) -> Checkpointer:
    """The checkpoint signer: COLIBRI_SIGNING_KEY, or colibri.key beside the database, made on
    first boot (its verifier key is printed on stderr then).

    KeyContinuityError when that key did not sign the log's latest checkpoint (SPEC §14), or
    when there is no key file but the log already has checkpoints: a new key made then would
    sign the rest of the log unnoticed. A log without checkpoints accepts any key.
    """
    if config.signing_key is not None:
        signer = read_signer(config.signing_key)
    else:
        origin = config.log_origin or log_notary.default_origin(db)
        path = default_key_path(config.db_path)
        if not path.exists():
            _refuse_a_new_key(db, path)
        signer, created = load_or_create(path, origin if valid_name(origin) else "colibri")
        if created:
            log.warning(
                "created checkpoint signing key %s; verifier key: %s — move the key file off this machine's "
                "database folder (set COLIBRI_SIGNING_KEY) and keep exported checkpoints elsewhere",
                path,
                signer.verifier().key(),
            )
    with db.snapshot() as conn:
        continuity.check_signer(conn, signer.verifier())
    log.debug("log checkpoints are signed by %s", signer.verifier().key())
    if config.witness_policy is None:
        return Notary(signer, config.log_origin, config.checkpoint_export)
    policy = read_policy(config.witness_policy, urls_required=True)
    return WitnessedNotary(Notary(signer, config.log_origin, config.checkpoint_export, policy))


def _refuse_a_new_key(db: Database, path: Path) -> None:
    with db.snapshot() as conn:
        latest = latest_checkpoint(conn)
    if latest is not None:
        raise KeyContinuityError(
            f"COLIBRI_SIGNING_KEY is unset and {path} does not exist, but the log's checkpoints are signed "
            f"by {continuity.signer_of(latest)}; set COLIBRI_SIGNING_KEY to that key's file (a new key would "
            "sign the rest of the log unnoticed)"
        )


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


async def checkpoint_every(app: Running) -> None:
    """Every COLIBRI_CHECKPOINT_INTERVAL_S, a checkpoint if the log grew; between calls only.

    Beside it, for as long as it runs, each checkpoint goes to the policy's witnesses
    (witness_duty.py): the log's two background duties start and stop together.
    """
    await app.ready.wait()
    async with anyio.create_task_group() as duties:
        duties.start_soon(submit_to_witnesses, app)
        while True:
            await anyio.sleep(app.config.checkpoint_interval_s)
            db, notary = app.state.db, app.state.notary
            if db is None or notary is None:
                duties.cancel_scope.cancel()
                return
            async with app.chain.lock:
                checkpoint_now(db, notary, log_notary.INTERVAL)


def checkpoint_at_shutdown(db: Database, notary: Checkpointer | None) -> None:
    if notary is not None and not db.readonly:
        checkpoint_now(db, notary, log_notary.SHUTDOWN)
