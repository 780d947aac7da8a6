"""`colibri switchboard status`: every downstream's state as a plain-text table."""

from __future__ import annotations

from typing import Any

from colibri.core.reasons import message
from colibri.switchboard.health import CheckKind


def table(status: dict[str, Any]) -> str:
    """A plain-text table: server, state, last checks, failures, cooldown left, and why it failed."""
    header = (
        "SERVER",
        "STATE",
        "LIVENESS",
        "READINESS",
        "CAPABILITY",
        "FAILURES",
        "COOLDOWN LEFT",
        "LAST FAILURE",
    )
    rows = [header]
    for server in status["servers"]:
        checks = server["last_checks"]
        rows.append(
            (
                server["name"],
                server["state"],
                *(_check(checks.get(str(kind))) for kind in CheckKind),
                _failures(server["failures"]),
                f"{server['cooldown_left_s']:.1f} s" if server["state"] == "QUARANTINE" else "-",
                _reason(server),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def _failures(failures: dict[str, int]) -> str:
    # The total counts every kind the streak counts: calls, checks and connections (one that
    # failed to open or was lost), so "1 in a row" never stands beside "0 total".
    total = failures["calls"] + failures["checks"] + failures["connects"]
    return f"{failures['consecutive']} in a row, {total} total"


def _reason(server: dict[str, Any]) -> str:
    """The last failure's reason; for a server that is not HEALTHY and never failed, why not."""
    # A downstream's own words may hold CR/LF or bidi characters: escaped (one line), they stay in their cell.
    if server["last_failure"]:
        return message(str(server["last_failure"]))
    if server["state"] != "HEALTHY" and server["transitions"]:
        return message(str(server["transitions"][-1]["reason"]))
    return "-"


def _check(record: dict[str, Any] | None) -> str:
    if record is None:
        return "-"
    return f"ok {record['duration_ms']:.0f} ms" if record["ok"] else "FAIL"
