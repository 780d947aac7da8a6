"""When checks run: each kind on its interval while HEALTHY, whole rounds in the other states."""

from __future__ import annotations

import math

from colibri.switchboard.config import HealthPolicy
from colibri.switchboard.health import CheckKind, State
from colibri.switchboard.health.schedule import Plan, Timeline, plan, restart_delay

POLICY = HealthPolicy(liveness_s=10, readiness_s=30, deep_s=300)
L, R, C = CheckKind.LIVENESS, CheckKind.READINESS, CheckKind.CAPABILITY


def next_step(
    state: State, now: float, timeline: Timeline, *, deep: bool = True, cooldown: float = 0.0
) -> Plan:
    return plan(state, now, timeline=timeline, policy=POLICY, has_deep=deep, cooldown_left=cooldown)


def test_starting_runs_a_full_round_at_once() -> None:
    assert next_step(State.STARTING, 5.0, Timeline()) == Plan(0.0, (L, R, C), round=True)
    assert next_step(State.STARTING, 5.0, Timeline(), deep=False) == Plan(0.0, (L, R), round=True)


def test_healthy_runs_each_kind_on_its_own_interval() -> None:
    timeline = Timeline()
    timeline.checked_all(100.0)
    assert next_step(State.HEALTHY, 104.0, timeline) == Plan(6.0)
    assert next_step(State.HEALTHY, 110.0, timeline) == Plan(0.0, (L,))
    timeline.last[L] = 130.0
    assert next_step(State.HEALTHY, 130.0, timeline) == Plan(0.0, (R,))
    timeline.last[R] = 130.0
    assert next_step(State.HEALTHY, 130.0, timeline) == Plan(10.0)
    assert next_step(State.HEALTHY, 400.0, timeline) == Plan(0.0, (L, R, C))


def test_a_failure_brings_the_capability_check_forward() -> None:
    timeline = Timeline(capability_wanted=True)
    timeline.checked_all(100.0)
    assert next_step(State.HEALTHY, 101.0, timeline) == Plan(0.0, (C,))
    assert next_step(State.HEALTHY, 101.0, timeline, deep=False) == Plan(9.0)


def test_unhealthy_retries_every_liveness_interval() -> None:
    assert next_step(State.UNHEALTHY, 50.0, Timeline()) == Plan(0.0, (L, R, C), round=True)
    assert next_step(State.UNHEALTHY, 50.0, Timeline(last_round=45.0)) == Plan(5.0, (L, R, C), round=True)


def test_quarantine_probes_when_the_cooldown_has_elapsed() -> None:
    timeline = Timeline(last_round=0.0)
    assert next_step(State.QUARANTINE, 50.0, timeline, cooldown=7.5) == Plan(7.5, (L, R, C), round=True)
    assert next_step(State.QUARANTINE, 50.0, timeline, cooldown=0.0).wait == 0.0


def test_probation_leaves_the_trial_to_real_calls_for_one_liveness_interval() -> None:
    timeline = Timeline(last_round=10.0, entered=20.0)
    assert next_step(State.PROBATION, 21.0, timeline) == Plan(9.0, (L, R, C), round=True)
    assert next_step(State.PROBATION, 31.0, timeline).wait == 0.0


def test_a_fresh_timeline_has_never_checked() -> None:
    assert Timeline().last_round == -math.inf
    assert next_step(State.HEALTHY, 0.0, Timeline(), deep=False) == Plan(0.0, (L, R))


def test_restarts_back_off_doubling_up_to_the_cap() -> None:
    policy = HealthPolicy(restart_backoff_s=0.5, restart_backoff_max_s=3)
    assert [restart_delay(attempt, policy) for attempt in range(1, 7)] == [0.5, 1, 2, 3, 3, 3]
