"""The checkpoint signer of a store, opened at start by every program that writes one: `colibri
serve` and the switchboard's audit store (SPEC §11, §14, §15, §16).

The key is the one named (COLIBRI_SIGNING_KEY, the audit section's `signing_key`), or else
`colibri.key` beside a SQLite store, made on first use (its verifier key is printed on stderr
then). `KeyContinuityError` when that key did not sign the log's latest checkpoint, or when there
is no key file but the log already has checkpoints: a new key made then would sign the rest of
the log unnoticed. A log without checkpoints accepts any key. With a witness policy, the notary
counts what it signs so that the witness duty wakes for each checkpoint.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from colibri.checkpointing.witnessing import WitnessedNotary
from colibri.core.database import Database
from colibri.core.state import Checkpointer
from colibri.domains.log import continuity
from colibri.domains.log import notary as log_notary
from colibri.domains.log.appends import adopt_existing
from colibri.domains.log.continuity import KeyContinuityError
from colibri.domains.log.keys import default_key_path, load_or_create, read_signer
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import Signer, valid_name
from colibri.domains.log.policy import read_policy
from colibri.domains.log.store import latest_checkpoint

log = logging.getLogger("colibri.log")


@dataclass(frozen=True, slots=True)
class LogSettings:
    """How a program keeps its store's log: the key, the origin, the export folder, the witnesses."""

    signing_key: Path | None  # None: colibri.key beside `sqlite_path`
    sqlite_path: Path  # the SQLite file (beside which the default key lives)
    origin: str | None = None  # None: colibri/<the database's id>
    export: Path | None = None
    witness_policy: Path | None = None
    interval_s: float = 60.0


def adopt(db: Database) -> None:
    """Log what a database written before the log existed already holds (once)."""
    with db.atomic() as conn:
        added = adopt_existing(conn)
    if added:
        log.warning("adopted %d existing record(s) and call(s) into the new verifiable log", added)


def open_notary(settings: LogSettings, db: Database, what: str = "COLIBRI_SIGNING_KEY") -> Checkpointer:
    """The signer of `db`'s checkpoints (see the module); `what` names where a key is set, for messages.

    Raises KeyContinuityError, NoteError (a key file that cannot be read or written) or PolicyError.
    """
    if settings.signing_key is not None:
        signer = read_signer(settings.signing_key)
    else:
        path = default_key_path(settings.sqlite_path)
        if not path.exists():
            _refuse_a_new_key(db, path, what)
        origin = settings.origin or log_notary.default_origin(db)
        signer, created = load_or_create(path, origin if valid_name(origin) else "colibri")
        if created:
            log.warning(
                "created checkpoint signing key %s; verifier key: %s — move the key file off this machine's "
                "database folder (set %s) and keep exported checkpoints elsewhere",
                path,
                signer.verifier().key(),
                what,
            )
    with db.snapshot() as conn:
        continuity.check_signer(conn, signer.verifier())
    log.debug("log checkpoints are signed by %s", signer.verifier().key())
    if settings.witness_policy is None:
        return Notary(signer, settings.origin, settings.export)
    policy = read_policy(settings.witness_policy, urls_required=True)
    return WitnessedNotary(Notary(signer, settings.origin, settings.export, policy))


def signer_of(notary: Checkpointer) -> Signer | None:
    """The key `notary` signs checkpoints with (None: a notary of another kind); the switchboard's
    default identity key, which signs its callers' statements to a downstream Colibri (SPEC §20)."""
    inner = notary.notary if isinstance(notary, WitnessedNotary) else notary
    return inner.signer if isinstance(inner, Notary) else None


def _refuse_a_new_key(db: Database, path: Path, what: str) -> None:
    with db.snapshot() as conn:
        latest = latest_checkpoint(conn)
    if latest is not None:
        raise KeyContinuityError(
            f"{what} is unset and {path} does not exist, but the log's checkpoints are signed "
            f"by {continuity.signer_of(latest)}; set {what} to that key's file (a new key would "
            "sign the rest of the log unnoticed)"
        )
