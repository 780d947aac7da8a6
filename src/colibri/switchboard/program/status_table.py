"""`colibri switchboard status`: every downstream's state as a plain-text table."""

from __future__ import annotations

from typing import Any

from colibri.switchboard.health import CheckKind


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
