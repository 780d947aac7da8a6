"""When to check a downstream next, decided from its state and the clock alone (no I/O, no sleeping).

HEALTHY runs each check kind on its own interval (and the capability check at once after a
failure); the other states judge the server by a *round* — every check kind in turn, one verdict:
STARTING at once, UNHEALTHY as a retry every `liveness_s`, QUARANTINE when the cooldown has
elapsed (the probe), PROBATION every `liveness_s` when no real call has taken the trial slot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from colibri.switchboard.config import HealthPolicy
from colibri.switchboard.health.checks import CheckKind
from colibri.switchboard.health.states import State


@dataclass(slots=True)
class Timeline:
    """When each check kind and the last round ran (monotonic seconds), and what is wanted next."""

    last: dict[CheckKind, float] = field(default_factory=dict)
    last_round: float = -math.inf
    entered: float = 0.0
    capability_wanted: bool = False

    def checked_all(self, now: float) -> None:
        for kind in CheckKind:
            self.last[kind] = now


@dataclass(frozen=True, slots=True)
class Plan:
    """Run `kinds` after `wait` seconds; as one verdict when `round` is set."""

    wait: float
    kinds: tuple[CheckKind, ...] = ()
    round: bool = False


def kinds_for(has_deep: bool) -> tuple[CheckKind, ...]:
    base = (CheckKind.LIVENESS, CheckKind.READINESS)
    return (*base, CheckKind.CAPABILITY) if has_deep else base


def interval(kind: CheckKind, policy: HealthPolicy) -> float:
    return {
        CheckKind.LIVENESS: policy.liveness_s,
        CheckKind.READINESS: policy.readiness_s,
        CheckKind.CAPABILITY: policy.deep_s,
    }[kind]


def plan(
    state: State,
    now: float,
    *,
    timeline: Timeline,
    policy: HealthPolicy,
    has_deep: bool,
    cooldown_left: float,
) -> Plan:
    """The next thing the checker of one downstream should do."""
    kinds = kinds_for(has_deep)
    if state is State.STARTING:
        return Plan(0.0, kinds, round=True)
    if state is State.QUARANTINE:
        return Plan(cooldown_left, kinds, round=True)
    if state is State.UNHEALTHY:
        return Plan(max(0.0, timeline.last_round + policy.liveness_s - now), kinds, round=True)
    if state is State.PROBATION:
        since = max(timeline.entered, timeline.last_round)
        return Plan(max(0.0, since + policy.liveness_s - now), kinds, round=True)
    due_at = {kind: timeline.last.get(kind, -math.inf) + interval(kind, policy) for kind in kinds}
    if has_deep and timeline.capability_wanted:
        due_at[CheckKind.CAPABILITY] = now
    due = tuple(kind for kind in kinds if due_at[kind] <= now)
    if due:
        return Plan(0.0, due)
    return Plan(min(due_at.values()) - now)


def restart_delay(attempt: int, policy: HealthPolicy) -> float:
    """Wait before reconnect number `attempt` (1 = the first after a loss): doubling, capped."""
    doubled: float = policy.restart_backoff_s * 2.0 ** max(0, attempt - 1)
    return min(doubled, policy.restart_backoff_max_s)
