"""What `switchboard_status` returns and `colibri switchboard status` prints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from colibri.switchboard.checks import CheckKind
from colibri.switchboard.config import Target
from colibri.switchboard.downstream import Downstream

RECENT_TRANSITIONS = 10


def snapshot(
    downstreams: Iterable[Downstream], fallbacks: Mapping[str, tuple[Target, ...]]
) -> dict[str, Any]:
    """Every downstream's state, last checks, failure counts, cooldown left and recent transitions."""
    return {
        "servers": [server_status(downstream) for downstream in downstreams],
        "fallbacks": {
            capability: [str(target) for target in chain] for capability, chain in fallbacks.items()
        },
    }


def server_status(downstream: Downstream) -> dict[str, Any]:
    machine, counters, session = downstream.machine, downstream.counters, downstream.session
    last_failure = machine.last_failure
    return {
        "name": downstream.name,
        "transport": downstream.spec.transport,
        "state": str(machine.state),
        "routable": machine.routable,
        "connected": session is not None,
        "protocol_version": None if session is None else session.protocol_version,
        "server_name": None if session is None else session.server_name,
        "tools": sorted(downstream.tools),
        "failures": {
            "consecutive": machine.failures,
            "calls": counters.call_failures,
            "checks": counters.check_failures,
            "connects": counters.connect_failures,
        },
        "calls": counters.calls,
        "checks_run": counters.checks,
        "restarts": counters.restarts,
        "cooldown_s": machine.cooldown_s,
        "cooldown_left_s": round(machine.cooldown_left(), 3),
        "trial_in_flight": machine.trial_in_flight,
        "last_failure": None if last_failure is None else last_failure.describe(),
        "last_checks": {
            str(kind): {
                "ok": record.ok,
                "at": record.at,
                "duration_ms": record.duration_ms,
                "detail": record.evidence.describe(),
            }
            for kind, record in sorted(downstream.checks.items())
        },
        "transitions": [
            {"at": t.wall, "from": str(t.source), "to": str(t.target), "reason": t.reason}
            for t in list(machine.history)[-RECENT_TRANSITIONS:]
        ],
    }


def table(status: dict[str, Any]) -> str:
    """A plain-text table: server, state, last checks, failures, cooldown left."""
    header = ("SERVER", "STATE", "LIVENESS", "READINESS", "CAPABILITY", "FAILURES", "COOLDOWN LEFT")
    rows = [header]
    for server in status["servers"]:
        checks = server["last_checks"]
        failures = server["failures"]
        rows.append(
            (
                server["name"],
                server["state"],
                *(_check(checks.get(str(kind))) for kind in CheckKind),
                f"{failures['consecutive']} in a row, {failures['calls'] + failures['checks']} total",
                f"{server['cooldown_left_s']:.1f} s" if server["state"] == "QUARANTINE" else "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    problems = [
        f"{server['name']}: {server['last_failure']}"
        for server in status["servers"]
        if server["state"] != "HEALTHY" and server["last_failure"]
    ]
    return "\n".join(lines + (["", *problems] if problems else []))


def _check(record: dict[str, Any] | None) -> str:
    if record is None:
        return "-"
    return f"ok {record['duration_ms']:.0f} ms" if record["ok"] else "FAIL"
