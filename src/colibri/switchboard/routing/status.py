"""What `switchboard_status` returns, `/status` shows and `colibri switchboard status` prints.

A token with a policy is shown only the servers and tools it may call (`seen_by`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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


def seen_by(
    status: dict[str, Any], server_shown: Callable[[dict[str, Any]], bool], shown: Callable[[str], bool]
) -> dict[str, Any]:
    """`status` with only the servers `server_shown` and the tools (`server.tool`, capabilities)
    `shown` admits: their own entries, fallback chains, resource clashes and changed tools."""
    servers = [
        server | {"tools": [tool for tool in server["tools"] if shown(f"{server['name']}.{tool}")]}
        for server in status.get("servers", ())
        if server_shown(server)
    ]
    names = {server["name"] for server in servers}
    seen = dict(status, servers=servers)
    if "fallbacks" in status:
        chains = {
            capability: [t for t in chain if shown(t)] for capability, chain in status["fallbacks"].items()
        }
        seen["fallbacks"] = {
            capability: chain for capability, chain in chains.items() if chain and shown(capability)
        }
    if "resource_clashes" in status:
        seen["resource_clashes"] = [
            clash | {"shadowed": [name for name in clash["shadowed"] if name in names]}
            for clash in status["resource_clashes"]
            if clash["served_by"] in names
        ]
    for key in ("withheld_tools", "changed_tools"):
        if key in status:
            seen[key] = [entry for entry in status[key] if shown(entry["tool"])]
    return seen
