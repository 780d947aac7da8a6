"""The three checks of SPEC §7, each bounded by `check_timeout_s`, each turned into `Evidence`.

- liveness: the connection answers an MCP ping (`server/discover` on the 2026 era);
- readiness: tools/list answers; a Colibri downstream (its serverInfo says `colibri`) must also be
  in phase2 in a mode other than MINIMAL, which its list shows: until then (phase 1, MINIMAL, a
  failed boot) it lists only its system tools, server_ping and server_health;
- capability: the configured lightweight real tool call succeeds.

Only the capability check, the operator's explicit choice, calls a tool: the others leave no
audit row in a downstream that keeps one (SPEC §21; a Colibri's log filled with server_health).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum

import mcp_types as types

from colibri.core.clock import utc_now
from colibri.switchboard.base import DownstreamError, DownstreamSession
from colibri.switchboard.config import DeepCheck
from colibri.switchboard.health.states import Evidence, Signal

COLIBRI = "colibri"
# All a Colibri lists while it cannot serve calls: in phase 1, in MINIMAL, after a failed boot.
SYSTEM_TOOLS_OF_COLIBRI = frozenset({"server_ping", "server_health"})
PASSED = Evidence(Signal.PASS)  # a real tool call worked
ALIVE = Evidence(Signal.ALIVE)  # the server answers; says nothing about whether calls work


class CheckKind(StrEnum):
    LIVENESS = "liveness"
    READINESS = "readiness"
    CAPABILITY = "capability"


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """The last result of one check kind, as `switchboard_status` shows it."""

    kind: CheckKind
    evidence: Evidence
    at: str
    duration_ms: float

    @property
    def ok(self) -> bool:
        return self.evidence.signal in (Signal.PASS, Signal.ALIVE)


@dataclass(frozen=True, slots=True)
class Checked:
    record: CheckRecord
    tools: list[types.Tool] | None = None


async def run_check(
    kind: CheckKind, session: DownstreamSession, timeout: float, deep: DeepCheck | None
) -> Checked:
    """Run one check and time it; downstream errors become failure evidence."""
    started = time.perf_counter()
    tools: list[types.Tool] | None = None
    try:
        if kind is CheckKind.LIVENESS:
            await session.ping(timeout)
            evidence = ALIVE
        elif kind is CheckKind.READINESS:
            tools = await session.list_tools(timeout)
            evidence = _colibri_ready(tools) if session.server_name == COLIBRI else ALIVE
        else:
            evidence = await _capability(session, timeout, deep)
    except DownstreamError as exc:
        evidence = Evidence(Signal.FAIL, exc.kind, f"{kind} check: {exc.message}")
    duration_ms = (time.perf_counter() - started) * 1000
    return Checked(CheckRecord(kind, evidence, utc_now(), round(duration_ms, 3)), tools)


def _colibri_ready(tools: list[types.Tool]) -> Evidence:
    if {tool.name for tool in tools} - SYSTEM_TOOLS_OF_COLIBRI:
        return ALIVE
    return Evidence(
        Signal.FAIL,
        "not ready",
        "colibri lists only server_ping and server_health: it is still starting, in mode MINIMAL, "
        "or its boot failed (phase2 and a mode other than MINIMAL are required)",
    )


async def _capability(session: DownstreamSession, timeout: float, deep: DeepCheck | None) -> Evidence:
    if deep is None:
        return ALIVE
    result = await session.call_tool(deep.tool, dict(deep.arguments), timeout)
    if result.is_error:
        text = " ".join(block.text for block in result.content if isinstance(block, types.TextContent))
        return Evidence(
            Signal.FAIL, "failed check", f"capability check {deep.tool} returned an error: {text[:200]}"
        )
    return PASSED
