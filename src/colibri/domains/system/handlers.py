from __future__ import annotations

from colibri.core.spec import ToolContext
from colibri.domains.system.models import Health, NoArguments, Ping


def ping(ctx: ToolContext, _: NoArguments) -> Ping:
    state = ctx.server
    return Ping(version=state.version, mode=state.reported_mode.value, uptime_ms=state.uptime_ms())


def health(ctx: ToolContext, _: NoArguments) -> Health:
    state = ctx.server
    return Health(
        status="ok",
        version=state.version,
        uptime_ms=state.uptime_ms(),
        db_tables=state.db_tables if state.db is not None else 0,
        phase=state.phase,
        mode=state.reported_mode.value,
    )
