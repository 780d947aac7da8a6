"""`colibri checkpoint [--status]`: the latest checkpoint with its witnesses' cosignatures (SPEC §11, §16).

Without --status: sign a new checkpoint first if the log grew, submit the latest to the witnesses
of COLIBRI_WITNESS_POLICY once (a witness that fails is logged on stderr and skipped: the
checkpoint is printed all the same), then print it with every cosignature stored for it.
With --status: each witness's last cosigned size and last attempt; nothing is signed or sent.
"""

from __future__ import annotations

import sys
from pathlib import Path

from colibri.cli.log_store import Unusable, log_store, usage
from colibri.core.database import Database
from colibri.domains.log import cosigned, store, tree
from colibri.domains.log import notary as log_notary
from colibri.domains.log.keys import default_key_path, read_signer
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import NoteError
from colibri.domains.log.policy import PolicyError, WitnessPolicy, read_policy
from colibri.domains.log.store import StoredCheckpoint
from colibri.runtime.config import Config
from colibri.serving.exits import EXIT_OK


def checkpoint(db_path: Path | str, config: Config, *, status: bool = False) -> int:
    command = "checkpoint --status" if status else "checkpoint"
    try:
        policy = None
        if config.witness_policy is not None:
            policy = read_policy(config.witness_policy, urls_required=not status)
        with log_store(db_path, readonly=status) as db:
            if status:
                return _status(db, policy)
            latest = _latest(db, db_path, config)
            if policy is not None:
                _submit(db, policy, config)
            with db.snapshot() as conn:
                lines = [] if latest.id is None else cosigned.cosignature_lines(conn, latest.id)
    except (Unusable, NoteError, PolicyError) as exc:
        return usage(command, str(exc))
    sys.stdout.write(cosigned.with_cosignatures(latest.note, lines))
    return EXIT_OK


def _latest(db: Database, db_path: Path | str, config: Config) -> StoredCheckpoint:
    """The latest checkpoint, signed now if the log grew since it (or there is none)."""
    with db.atomic() as conn:
        latest = store.latest_checkpoint(conn)
        if latest is not None and latest.size == tree.size(conn):
            return latest
        key = config.signing_key or (default_key_path(db_path) if isinstance(db_path, Path) else None)
        if key is None:
            raise Unusable(
                "the log grew and no signing key is named; set COLIBRI_SIGNING_KEY to the signer key "
                "file the servers use"
            )
        if not key.is_file():
            raise Unusable(
                f"the log grew and no signing key was found at {key}; set COLIBRI_SIGNING_KEY to the "
                "signer key file the server uses"
            )
        notary = Notary(read_signer(key), config.log_origin, config.checkpoint_export)
        return notary.make(conn, log_notary.ON_DEMAND)


def _submit(db: Database, policy: WitnessPolicy, config: Config) -> None:
    """One submission to every witness at once; failures are logged (stderr), never fatal here."""
    import anyio

    from colibri.runtime.witness_cli import submit_once
    from colibri.serving import logs

    logs.configure(config.log_level)
    anyio.run(submit_once, db, policy, config.checkpoint_export)


def _status(db: Database, policy: WitnessPolicy | None) -> int:
    with db.snapshot() as conn:
        latest = store.latest_checkpoint(conn)
        known = {status.witness_key: status for status in cosigned.witness_status(conn)}
    if latest is None:
        print("latest checkpoint: none yet")
    else:
        print(f"latest checkpoint: size {latest.size}, made {latest.made_at} ({latest.reason})")
    names = [(w.key.key(), w.name, w.url) for w in policy.witnesses] if policy is not None else []
    names += [(key, s.name, s.url) for key, s in known.items() if key not in {n[0] for n in names}]
    if not names:
        print("witnesses:         none (set COLIBRI_WITNESS_POLICY)")
    for key, name, url in names:
        seen = known.get(key)
        size = "never" if seen is None or seen.cosigned_size is None else f"size {seen.cosigned_size}"
        if seen is None or seen.last_attempt_at is None:
            last = "never submitted to"
        else:
            last = f"last attempt {seen.last_attempt_at}: " + (
                "ok" if seen.last_error is None else seen.last_error
            )
        print(f"witness {name} ({url or 'no URL'}): last cosigned {size}; {last}")
    return EXIT_OK
