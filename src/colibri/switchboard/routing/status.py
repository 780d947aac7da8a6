"""What `switchboard_status` returns, `/status` shows and `colibri switchboard status` prints."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

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
