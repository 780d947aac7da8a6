"""The three checks of SPEC §7, each bounded by `check_timeout_s`, each turned into `Evidence`.

- liveness: the connection answers an MCP ping (`server/discover` on the 2026 era);
- readiness: tools/list answers; a Colibri downstream must also report phase2 and a mode other
  than MINIMAL in `server_health`;
- capability: the configured lightweight real tool call succeeds.
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
            evidence = await _colibri_ready(session, timeout) if session.server_name == COLIBRI else ALIVE
        else:
            evidence = await _capability(session, timeout, deep)
    except DownstreamError as exc:
        evidence = Evidence(Signal.FAIL, exc.kind, f"{kind} check: {exc.message}")
    duration_ms = (time.perf_counter() - started) * 1000
    return Checked(CheckRecord(kind, evidence, utc_now(), round(duration_ms, 3)), tools)


async def _colibri_ready(session: DownstreamSession, timeout: float) -> Evidence:
    result = await session.call_tool("server_health", {}, timeout)
    envelope = result.structured_content or {}
    data = envelope.get("data") if envelope.get("ok") is True else None
    if not isinstance(data, dict) or "phase" not in data or "mode" not in data:
        return Evidence(Signal.INDETERMINATE, "unreadable health", "server_health gave no phase and mode")
    if data["phase"] != "phase2" or data["mode"] == "MINIMAL":
        return Evidence(
            Signal.FAIL,
            "not ready",
            f"server_health reports phase {data['phase']} and mode {data['mode']} "
            "(phase2 and a mode other than MINIMAL are required)",
        )
    return ALIVE


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
