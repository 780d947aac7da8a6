"""What a route says when an entry fails: UPSTREAM_TIMEOUT / UPSTREAM_ERROR (never repeated where it
may have acted), the reason an entry could not take a call, for SERVICE_UNAVAILABLE, and the
refusal of a name longer than any tool's."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from colibri.core.shown import LONGEST_NAME, shown
from colibri.switchboard.base import (
    SERVICE_UNAVAILABLE,
    UNKNOWN_TOOL,
    UPSTREAM_ERROR,
    UPSTREAM_TIMEOUT,
    CallTimedOut,
    DownstreamError,
    envelopes,
)
from colibri.switchboard.config import STATUS_TOOL, Target
from colibri.switchboard.routing.observers import Refusal


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


def unavailable(
    name: str, reasons: list[dict[str, str]], schemas: list[dict[str, Any] | None]
) -> types.CallToolResult:
    """SERVICE_UNAVAILABLE: no entry could take the call, with each one's reason."""
    return envelopes.error(
        SERVICE_UNAVAILABLE,
        f"{name} is unavailable: {'; '.join(r['reason'] for r in reasons)}. "
        f"Try again later or call {STATUS_TOOL} for details",
        schemas=schemas,
        tool=name,
        reasons=reasons,
    )


def reason(target: Target, reason: str, why: str) -> dict[str, str]:
    """Why an entry could not take a call: the sentence, and its kind (`why`: removed, no_tool,
    hidden, failed, or the server's health state), which the audit row's `unavailable:<why>` names."""
    return {"target": str(target), "reason": reason, "why": why}


def too_long_name(name: str) -> Refusal:
    """UNKNOWN_TOOL for a name over LONGEST_NAME characters, which names it by length and digest:
    it is never looked up, and neither the answer nor the audit row grows with it (SPEC §21)."""
    return Refusal(
        UNKNOWN_TOOL,
        f"unknown tool {shown(name)}: no tool name is longer than {LONGEST_NAME} characters; call "
        "tools/list for the tools offered now",
    )
