"""Phase 2 of the two-phase boot: load the tools and build the chain, then open the database,
migrate (or check) it, sweep stale rows.

Phase 1 is the transport itself (runtime/server.py), answering `initialize` and tools/list from the
kept declarations; this module is first imported by phase 2's thread (`App._load`), with the chain,
the storage and the catalogue it imports, so none of them delays the first answers (SPEC §25). If
phase 2 fails the server stays in MINIMAL with phase1 and says why on stderr; it never widens to
the declared mode.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import anyio.to_thread

from colibri.chain.pipeline import Chain
from colibri.core.errors import StorageError
from colibri.core.modes import opens_database, writes_allowed
from colibri.core.spec import Tool
from colibri.core.state import ServerState
from colibri.domains.log.api import KeyContinuityError, NoteError, PolicyError, log_action
from colibri.runtime.checkpoints import adopt, open_notary
from colibri.runtime.config import Config
from colibri.serving.exits import EXIT_USAGE
from colibri.serving.signals import leave
from colibri.storage import Database, Migration, open_database
from colibri.storage.audit_log import mark_interrupted
from colibri.storage.migrations import migrate, require_current
from colibri.tools.catalog import TOOLS, migrations_for

log = logging.getLogger("colibri.boot")


def load(tools: Sequence[Tool] | None) -> dict[str, Tool]:
    """In phase 2's thread: each tool's handler and models imported (the catalogue's when `tools`
    is None), so that the first call of a tool finds them loaded."""
    loaded = {tool.name: tool for tool in (TOOLS if tools is None else tools)}
    for tool in loaded.values():
        tool.handle  # noqa: B018 - cached on first use: this is the first use
        tool.arguments_model  # noqa: B018
        tool.result_model  # noqa: B018
    return loaded


def chain_for(tools: dict[str, Tool], state: ServerState, config: Config) -> Chain:
    """The chain over the loaded tools (made on the event loop: its lock and events belong there)."""
    return Chain(tools, state, config.log_origin)


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
