"""What a route says when an entry fails: UPSTREAM_TIMEOUT / UPSTREAM_ERROR (never repeated where it
may have acted), and the reason an entry could not take a call, for SERVICE_UNAVAILABLE."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from colibri.switchboard.base import (
    UPSTREAM_ERROR,
    UPSTREAM_TIMEOUT,
    CallTimedOut,
    DownstreamError,
    envelopes,
)
from colibri.switchboard.config import Target


def upstream_error(
    name: str,
    target: Target,
    exc: DownstreamError,
    rest: tuple[Target, ...],
    schemas: list[dict[str, Any] | None],
) -> types.CallToolResult:
    timed_out = isinstance(exc, CallTimedOut)
    what = "did not answer in time" if timed_out else "failed after the request was sent"
    message = f"{target} {what} ({exc.message}); it may have acted"
    if rest:
        message += (
            f", so the call was not repeated on {', '.join(str(t) for t in rest)}: "
            f"{target.tool!r} is not marked idempotent for {target.server} in the config"
        )
    return envelopes.error(
        UPSTREAM_TIMEOUT if timed_out else UPSTREAM_ERROR,
        message,
        schemas=schemas,
        tool=name,
        server=target.server,
        repeated=False,
        failure=exc.kind,
    )


def reason(target: Target, reason: str, why: str) -> dict[str, str]:
    """Why an entry could not take a call: the sentence, and its kind (`why`: removed, no_tool,
    hidden, failed, or the server's health state), which the audit row's `unavailable:<why>` names."""
    return {"target": str(target), "reason": reason, "why": why}
