from __future__ import annotations

from colibri.core.spec import ToolContext
from colibri.core.state import ServerState
from colibri.domains.system.models import Health, NoArguments, Ping


def ping(ctx: ToolContext, _: NoArguments) -> Ping:
    state = ctx.server
    return Ping(version=state.version, mode=state.mode.value, uptime_ms=state.uptime_ms())


def health(ctx: ToolContext, _: NoArguments) -> Health:
    state = ctx.server
    return Health(
        status="ok",
        version=state.version,
        uptime_ms=state.uptime_ms(),
        db_tables=_db_tables(state),
        phase=state.phase,
        mode=state.mode.value,
    )


def _db_tables(state: ServerState) -> int:
    if state.db is None:
        return 0
    try:
        return state.db.user_table_count()
    except Exception:  # noqa: BLE001 - the one place the spec says to swallow: health never raises (closed, locked, ...)
        return 0
