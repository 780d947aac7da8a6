"""The stdio runner: one MCP server on our stdin/stdout, stopped by stdin EOF or a signal.

On EOF `run_stdio` returns and the program closes what it owns. On a signal the program's
`drain` runs (finish the call in flight, close), then the process leaves (signals.py).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions

from colibri.pipes import LINE_LIMIT, Divert, stdio_streams
from colibri.pipes.inflight import DEFAULT_LIMIT_S
from colibri.serving.signals import Stop, leave, on_stop_signal


async def run_stdio(
    server: Server[Any],
    options: InitializationOptions,
    *,
    drain: Stop,
    what: str,
    background: Sequence[Callable[[], Coroutine[Any, Any, None]]] = (),
    message_limit: int = LINE_LIMIT,
    answer_within_s: float = DEFAULT_LIMIT_S,
    divert: Divert | None = None,
) -> None:
    """Serve until stdin reaches EOF. `background` work starts once the transport is up and is
    cancelled when it ends; `what` says in the log what a signal's stop does; `message_limit`
    caps one JSON-RPC line (COLIBRI_MAX_MESSAGE_BYTES); requests read before stdin's end are
    answered first, each within `answer_within_s` (pipes/inflight.py); `divert` may take lines
    before the SDK sees them (see pipes)."""
    async with (
        stdio_streams(message_limit, answer_within_s, divert) as (read_stream, write_stream),
        anyio.create_task_group() as tasks,
    ):
        for work in background:
            tasks.start_soon(work)
        tasks.start_soon(_drain_then_leave, drain, what)
        await server.run(read_stream, write_stream, options)
        tasks.cancel_scope.cancel()


async def _drain_then_leave(drain: Stop, what: str) -> None:
    # Cancelled (stdin closed first): the program's own close path runs instead.
    await on_stop_signal(drain, what=what)
    leave()
