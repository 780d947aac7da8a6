"""Phase 2 of the two-phase boot: open the database, migrate (or check) it, sweep stale rows.

Phase 1 is the transport itself (runtime/server.py). If phase 2 fails the server stays
in MINIMAL with phase1 and says why on stderr; it never widens to the declared mode.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

import anyio.to_thread

from colibri.chain.audit_log import mark_interrupted
from colibri.domains.log.note import NoteError
from colibri.errors import StorageError
from colibri.runtime.checkpoints import adopt, open_notary
from colibri.runtime.config import Config
from colibri.runtime.modes import opens_database, writes_allowed
from colibri.runtime.state import ServerState
from colibri.storage import Database, Migration
from colibri.storage.migrations import migrate, require_current

log = logging.getLogger("colibri.boot")


def open_runtime_database(config: Config, migrations: Sequence[Migration]) -> Database:
    """Open the file for the mode: migrate it where writes are allowed, else insist it is current."""
    readonly = not writes_allowed(config.mode)
    db = Database.open(config.db_path, readonly=readonly, sync=config.db_sync.value)
    try:
        if readonly:
            require_current(db, migrations)
        else:
            migrate(db, migrations)
            adopt(db)  # before the sweep, which logs the rows it closes
            swept = mark_interrupted(db)
            if swept:
                log.warning("marked %d call(s) left running by a previous process as interrupted", swept)
            db.checkpoint_in_background()
    except BaseException:
        db.close()
        raise
    return db


async def run_phase2(state: ServerState, config: Config, migrations: Sequence[Migration]) -> None:
    if not opens_database(config.mode):
        state.mode, state.phase = config.mode, "phase2"
        return
    try:
        db = await anyio.to_thread.run_sync(open_runtime_database, config, migrations)
        if not db.readonly:
            try:
                state.notary = await anyio.to_thread.run_sync(open_notary, config, db)
            except BaseException:
                db.close()
                raise
    except (StorageError, sqlite3.Error, OSError, NoteError) as exc:
        state.boot_error = str(exc)
        log.error("boot failed, serving MINIMAL (server_ping, server_health only): %s", exc)
        return
    state.db = db
    state.mode, state.phase = config.mode, "phase2"
