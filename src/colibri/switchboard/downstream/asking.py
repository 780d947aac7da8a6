"""A 2026-era downstream that answers a lean request with input requests (MCP 2026-07-28).

The lean lane writes tools/call as JSON and reads the raw result; a 2026-era server may answer it
`input_required` instead, asking for a sampling, an elicitation or the roots. Such a server keeps
no state between rounds, so the call is simply made again through the SDK's client, whose callbacks
relay each input request to the client of the call and retry with the answers (transport.py).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

from colibri.switchboard.base import Done, DownstreamError


def asks_for_input(raw: dict[str, Any]) -> bool:
    """Whether a 2026-era server answered with input requests instead of a result."""
    return raw.get("resultType") == "input_required"


def unless_asked(
    done: Done, drive: Callable[[], Awaitable[dict[str, Any]]], tasks: set[asyncio.Task[None]]
) -> Done:
    """`done`, except that an `input_required` answer is first driven to its result (in a task).

    The task runs in the context of the call as it was sent (not of the reader that hands over the
    answer): its input requests go to that call's client (owners.py's `CALL`).
    """
    context = contextvars.copy_context()

    def finished(outcome: dict[str, Any] | DownstreamError) -> None:
        if isinstance(outcome, DownstreamError) or not asks_for_input(outcome):
            done(outcome)
            return

        async def driven() -> None:
            try:
                done(await drive())
            except DownstreamError as exc:
                done(exc)

        task = asyncio.get_running_loop().create_task(driven(), context=context)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    return finished
