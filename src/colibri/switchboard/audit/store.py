"""The audit store (SPEC §15): a normal Colibri store, opened through the storage layer with the
catalogue's migrations, whose log is kept as `colibri serve` keeps its own (colibri.checkpointing):
checkpoints signed with its key on an interval while it grows and at shutdown, witnesses when
COLIBRI_WITNESS_POLICY is set. So `colibri verify`, `checkpoint`, `prove`, `log entries`, `ui` and
`db copy` all work on it, and a `colibri serve` may share it.

`open_store` runs before anything is served: a store that cannot be opened, written or locked (held
by another process longer than LOCK_WAIT_S), a signing key that may not sign its log, or a bad
witness policy is an `AuditStoreError` naming the store (exit 2).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio

from colibri.checkpointing import LogSettings, checkpoint_at_shutdown, keep_log, open_notary, signer_of
from colibri.checkpointing import adopt as adopt_older_rows
from colibri.core.clock import utc_now
from colibri.core.env import DbSync, choice, log_origin, missing_db_folder, optional_path, seconds
from colibri.core.errors import StorageError, WouldWait
from colibri.core.state import Checkpointer
from colibri.domains.access.api import StatementKey
from colibri.domains.approvals import api as approvals
from colibri.domains.log.api import KeyContinuityError, NoteError, PolicyError, log_action
from colibri.domains.pins import api as pins
from colibri.storage import Database, open_database
from colibri.storage.audit_log import mark_interrupted
from colibri.storage.migrations import migrate
from colibri.switchboard.audit.writer import Writer
from colibri.switchboard.config import AuditSpec
from colibri.tools.catalog import migrations_for

log = logging.getLogger("colibri.switchboard")

LOCK_WAIT_S = 5.0
# The switchboard's rows, and only those, are its to sweep: `colibri serve`'s tools hold no dot or colon.
OWN_ROWS = ("%.%", "%:%", "switchboard_status")


class AuditStoreError(Exception):
    """The audit store cannot be used; the message names it and says why."""


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """What the environment says about keeping a store and its log, as for `colibri serve`."""

    sync: str = "normal"
    origin: str | None = None
    export: Path | None = None
    witness_policy: Path | None = None
    interval_s: float = 60.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> StoreOptions:
        """COLIBRI_DB_SYNC, COLIBRI_LOG_ORIGIN, COLIBRI_CHECKPOINT_EXPORT, COLIBRI_WITNESS_POLICY,
        COLIBRI_CHECKPOINT_INTERVAL_S; `core.env.ConfigError` for an unusable value."""
        env = os.environ if env is None else env
        return cls(
            sync=choice(env, "COLIBRI_DB_SYNC", DbSync, "normal").value,
            origin=log_origin(env),
            export=optional_path(env, "COLIBRI_CHECKPOINT_EXPORT"),
            witness_policy=optional_path(env, "COLIBRI_WITNESS_POLICY"),
            interval_s=seconds(env, "COLIBRI_CHECKPOINT_INTERVAL_S", 60.0),
        )


@dataclass(slots=True)
class AuditStore:
    """The open store: its writer, the signer of its checkpoints, and the pins it held at start."""

    spec: AuditSpec
    writer: Writer
    notary: Checkpointer
    pins: list[pins.Pin]
    interval_s: float
    origin: str | None = None  # the log's origin as configured (None: colibri/<the store's id>)

    @property
    def identity_key(self) -> StatementKey | None:
        """The store's signing key as the default `identity_key` (SPEC §20, routing/vouching.py)."""
        signer = signer_of(self.notary)
        return None if signer is None else StatementKey(signer)

    async def keep(self) -> None:
        """The store's duties while the switchboard serves: grouped writes, checkpoints and
        witnesses; runs until cancelled."""
        async with anyio.create_task_group() as duties:
            duties.start_soon(self.writer.serve)
            duties.start_soon(keep_log, self.notary, self.interval_s, self.writer.run)

    async def close(self) -> None:
        """The rows still waiting, the shutdown checkpoint, then the connection closed."""
        await self.writer.close(partial(checkpoint_at_shutdown, notary=self.notary))


def open_store(spec: AuditSpec, options: StoreOptions) -> AuditStore:
    """Open, lock-check, migrate and sign for the store of `spec` (see the module)."""
    missing = None if spec.sqlite_path is None else missing_db_folder(spec.sqlite_path)
    if missing is not None:
        raise AuditStoreError(
            f"audit store {spec}: {missing}, "
            'or point the audit section\'s "db" at a file in an existing folder'
        )
    try:
        db = open_database(spec.target, sync=options.sync)
    except StorageError as exc:
        raise AuditStoreError(f"audit store {spec}: {exc}") from None
    try:
        _wait_for_the_write_lock(db)
        migrate(db, migrations_for(db.dialect.name))
        adopt_older_rows(db)
        swept = mark_interrupted(db, log_action, OWN_ROWS)
        if swept:
            log.warning(
                "audit store: marked %d call(s) left running by a previous switchboard as interrupted", swept
            )
        with db.atomic() as conn:  # proves the store takes writes (a read-only file would not)
            conn.execute("UPDATE log_meta SET adopted = adopted WHERE id = 1")
            held = approvals.interrupt_pending(conn, utc_now(), log_action)  # SPEC §22
        if held:
            log.warning(
                "audit store: %d call(s) held for approval by the previous switchboard: interrupted", held
            )
        db.checkpoint_in_background()
        settings = LogSettings(
            signing_key=spec.signing_key,
            sqlite_path=spec.sqlite_path or Path("."),
            origin=options.origin,
            export=options.export,
            witness_policy=options.witness_policy,
            interval_s=options.interval_s,
        )
        notary = open_notary(settings, db, what='the audit section\'s "signing_key"')
        with db.snapshot() as conn:
            stored = pins.all_pins(conn)
    except (StorageError, KeyContinuityError, NoteError, PolicyError, OSError) as exc:
        db.close()
        raise AuditStoreError(f"audit store {spec}: {exc}") from None
    return AuditStore(spec, Writer(db), notary, stored, options.interval_s, options.origin)


def _wait_for_the_write_lock(db: Database) -> None:
    """Return once the store's write lock can be had; StorageError when another process holds it
    past LOCK_WAIT_S. (PostgreSQL waits in its own lock timeout instead.)"""
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        with db.without_waiting() as refuses_to_wait:
            if not refuses_to_wait:
                return
            try:
                with db.atomic():
                    return
            except WouldWait:
                pass
        if time.monotonic() > deadline:
            raise StorageError(
                f"it is locked by another process (waited {LOCK_WAIT_S:g} s for its write lock); "
                "stop the process that holds it, or point the audit section at another store"
            )
        time.sleep(0.05)
