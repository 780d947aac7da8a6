"""Phase 2 of the two-phase boot: open the database, migrate (or check) it, sweep stale rows.

Phase 1 is the transport itself (runtime/server.py). If phase 2 fails the server stays
in MINIMAL with phase1 and says why on stderr; it never widens to the declared mode.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import anyio.to_thread

from colibri.core.errors import StorageError
from colibri.core.modes import opens_database, writes_allowed
from colibri.core.state import ServerState
from colibri.domains.log.api import KeyContinuityError, NoteError, PolicyError, log_action
from colibri.runtime.checkpoints import adopt, open_notary
from colibri.runtime.config import Config
from colibri.serving.exits import EXIT_USAGE
from colibri.serving.signals import leave
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
            adopt(db)  # before the sweep, which logs the rows it closes
            swept = mark_interrupted(db, log_action)
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
        tables = await anyio.to_thread.run_sync(db.user_table_count)
        if not db.readonly:
            try:
                state.notary = await anyio.to_thread.run_sync(open_notary, config, db)
            except BaseException:
                db.close()
                raise
    except (KeyContinuityError, PolicyError) as exc:
        # Not boot failures to serve through in MINIMAL: every later checkpoint would be refused
        # too (§14), or go to no witness (§16); the operator must choose. Exit 2, stdio and HTTP alike.
        log.error("cannot start: %s", exc)
        leave(EXIT_USAGE)
    except (StorageError, NoteError, OSError) as exc:
        state.boot_error = without_paths(str(exc), config.db_path)
        log.error("boot failed, serving MINIMAL (server_ping, server_health only): %s", exc)
        return
    state.db, state.db_tables = db, tables
    state.mode, state.phase = config.mode, "phase2"


def without_paths(message: str, db_path: Path) -> str:
    """The boot error as clients see it: the database by its file name only. The full path is on
    stderr for the operator; a client has no use for the layout of the server's disk."""
    absolute = db_path.resolve()
    for shown in sorted({absolute.as_uri(), str(absolute), str(db_path)}, key=len, reverse=True):
        message = message.replace(shown, db_path.name)
    return message
