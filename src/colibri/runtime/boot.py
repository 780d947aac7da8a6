"""Phase 2 of the two-phase boot: open the database, migrate (or check) it, sweep stale rows.

Phase 1 is the transport itself (runtime/server.py). If phase 2 fails the server stays
in MINIMAL with phase1 and says why on stderr; it never widens to the declared mode.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio.to_thread

from colibri.core.errors import StorageError
from colibri.core.modes import opens_database, writes_allowed
from colibri.core.state import ServerState
from colibri.runtime.config import Config
from colibri.storage import Database, Migration, open_database
from colibri.storage.audit_log import mark_interrupted
from colibri.storage.migrations import migrate, require_current
from colibri.tools.catalog import migrations_for

log = logging.getLogger("colibri.boot")


def open_runtime_database(config: Config, migrations: Sequence[Migration] | None = None) -> Database:
    """Open the file for the mode: migrate it where writes are allowed, else insist it is current.

    `migrations` default to the catalogue's list for the backend that opened."""
    readonly = not writes_allowed(config.mode)
    db = open_database(config.db_target, readonly=readonly, sync=config.db_sync.value)
    try:
        if migrations is None:
            migrations = migrations_for(db.dialect.name)
        if readonly:
            require_current(db, migrations)
        else:
            migrate(db, migrations)
            swept = mark_interrupted(db)
            if swept:
                log.warning("marked %d call(s) left running by a previous process as interrupted", swept)
            db.checkpoint_in_background()
    except BaseException:
        db.close()
        raise
    return db


async def run_phase2(state: ServerState, config: Config, migrations: Sequence[Migration] | None) -> None:
    if not opens_database(config.mode):
        state.mode, state.phase = config.mode, "phase2"
        return
    try:
        db = await anyio.to_thread.run_sync(open_runtime_database, config, migrations)
    except StorageError as exc:
        state.boot_error = str(exc)
        log.error("boot failed, serving MINIMAL (server_ping, server_health only): %s", exc)
        return
    state.db = db
    state.mode, state.phase = config.mode, "phase2"
