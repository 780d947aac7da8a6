"""Every transition of the health state machine (SPEC §7), driven by a fake clock: no sleeping."""

from __future__ import annotations

import pytest

from colibri.switchboard.base import IllegalTransition
from colibri.switchboard.config import HealthPolicy
from colibri.switchboard.health import Evidence, HealthMachine, Signal, State, Ticket, Transition
from colibri.switchboard.health.rules import TABLE

POLICY = HealthPolicy(failures_to_quarantine=3, cooldown_s=10, cooldown_max_s=35)
ALIVE = Evidence(Signal.ALIVE, detail="liveness, readiness")
CALLED = Evidence(Signal.PASS, detail="call work")
CAPABLE = Evidence(Signal.PASS, detail="liveness, readiness, capability")
TIMEOUT = Evidence(Signal.FAIL, "timeout", "call work: no answer within 30 s")
ERROR = Evidence(Signal.FAIL, "error", "call work: JSON-RPC error -32603")
LOST = Evidence(Signal.LOST, "lost connection", "the process exited")
UNSURE = Evidence(Signal.INDETERMINATE, "unreadable health", "server_health gave no phase")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def machine_in(state: State, clock: FakeClock, policy: HealthPolicy = POLICY) -> HealthMachine:
    """A machine walked into `state` through legal moves only."""
    machine = HealthMachine("search-a", policy, clock)
    if state is State.STARTING:
        return machine
    if state is State.UNHEALTHY:
        machine.report(None, ERROR)
        return machine
    machine.report(machine.check_ticket(), ALIVE)
    if state is State.HEALTHY:
        return machine
    for _ in range(policy.failures_to_quarantine):
        machine.report(machine.admit(), TIMEOUT)
    if state is State.QUARANTINE:
        return machine
    clock.advance(machine.cooldown_left())
    machine.report(machine.probe_ticket(), ALIVE)
    assert machine.state is State.PROBATION
    return machine


def moves(machine: HealthMachine) -> list[tuple[State, State]]:
    return [(t.source, t.target) for t in machine.history]


# --- STARTING ----------------------------------------------------------------------------------------


def test_starting_checks_pass_becomes_healthy(clock: FakeClock) -> None:
    machine = machine_in(State.STARTING, clock)
    transition = machine.report(machine.check_ticket(), ALIVE)
    assert transition is not None and transition.target is State.HEALTHY
    assert "checks passed" in transition.reason
    assert machine.routable


def test_starting_failure_becomes_unhealthy(clock: FakeClock) -> None:
    machine = machine_in(State.STARTING, clock)
    machine.report(None, Evidence(Signal.FAIL, "failed connection", "cannot start x: not found"))
    assert machine.state is State.UNHEALTHY
    assert "cannot start x" in machine.history[-1].reason


def test_starting_indeterminate_becomes_unhealthy(clock: FakeClock) -> None:
    machine = machine_in(State.STARTING, clock)
    machine.report(machine.check_ticket(), UNSURE)
    assert machine.state is State.UNHEALTHY
    assert machine.history[-1].reason.startswith("indeterminate")


def test_starting_is_never_routed_to(clock: FakeClock) -> None:
    machine = machine_in(State.STARTING, clock)
    assert machine.admit() is None
    assert not machine.routable
    assert machine.why_not().startswith("search-a is starting")


def test_lost_while_starting_restarts_until_the_streak_quarantines(clock: FakeClock) -> None:
    machine = machine_in(State.STARTING, clock)
    machine.report(None, LOST)
    machine.report(None, LOST)
    assert machine.state is State.STARTING
    machine.report(None, LOST)
    assert machine.state is State.QUARANTINE
    assert machine.history[-1].reason == "3 consecutive lost connections"


# --- HEALTHY -----------------------------------------------------------------------------------------


def test_three_consecutive_failures_quarantine(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    machine.report(machine.admit(), TIMEOUT)
    machine.report(machine.check_ticket(), TIMEOUT)
    assert machine.state is State.HEALTHY and machine.failures == 2
    transition = machine.report(machine.admit(), TIMEOUT)
    assert transition is not None
    assert (transition.source, transition.target) == (State.HEALTHY, State.QUARANTINE)
    assert transition.reason == "3 consecutive timeouts"
    assert machine.why_not() == "search-a quarantined: 3 consecutive timeouts (next probe in 10.0 s)"


def test_mixed_failures_are_named_in_the_reason(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    for evidence in (TIMEOUT, ERROR, TIMEOUT):
        machine.report(machine.admit(), evidence)
    assert machine.history[-1].reason == "3 consecutive failures (timeout, error, timeout)"


def test_a_success_breaks_the_streak(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    for evidence in (TIMEOUT, TIMEOUT, CALLED, TIMEOUT, TIMEOUT):
        machine.report(machine.admit(), evidence)
    assert machine.state is State.HEALTHY
    assert machine.failures == 2


def test_healthy_indeterminate_becomes_unhealthy(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    machine.report(machine.check_ticket(), UNSURE)
    assert machine.state is State.UNHEALTHY
    assert machine.admit() is None


def test_healthy_lost_connection_restarts(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    transition = machine.report(None, LOST)
    assert transition is not None and transition.target is State.STARTING
    assert transition.reason == "lost connection: the process exited; restarting"
    machine.report(machine.check_ticket(), ALIVE)
    assert moves(machine)[-2:] == [(State.HEALTHY, State.STARTING), (State.STARTING, State.HEALTHY)]


# --- UNHEALTHY ---------------------------------------------------------------------------------------


def test_unhealthy_retry_passes_into_probation(clock: FakeClock) -> None:
    machine = machine_in(State.UNHEALTHY, clock)
    assert machine.admit() is None
    machine.report(machine.check_ticket(), ERROR)
    machine.report(machine.check_ticket(), UNSURE)
    assert machine.state is State.UNHEALTHY
    machine.report(machine.check_ticket(), ALIVE)
    assert machine.state is State.PROBATION
    assert "retry passed" in machine.history[-1].reason


def test_unhealthy_lost_connection_restarts(clock: FakeClock) -> None:
    machine = machine_in(State.UNHEALTHY, clock)
    machine.report(None, LOST)
    assert machine.state is State.STARTING


# --- QUARANTINE --------------------------------------------------------------------------------------


def test_quarantine_waits_for_its_cooldown(clock: FakeClock) -> None:
    machine = machine_in(State.QUARANTINE, clock)
    assert machine.admit() is None and machine.check_ticket() is not None
    assert machine.cooldown_left() == 10.0
    clock.advance(9.5)
    assert machine.cooldown_left() == pytest.approx(0.5)
    assert not machine.probe_due()
    with pytest.raises(IllegalTransition, match="cannot probe in state QUARANTINE"):
        machine.probe_ticket()
    clock.advance(0.5)
    assert machine.probe_due()


def test_cooldown_elapsed_and_probe_passes_into_probation(clock: FakeClock) -> None:
    machine = machine_in(State.QUARANTINE, clock)
    clock.advance(10)
    transition = machine.report(machine.probe_ticket(), ALIVE)
    assert transition is not None and transition.target is State.PROBATION
    assert "cooldown elapsed and probe passed" in transition.reason


def test_a_pass_before_the_cooldown_changes_nothing(clock: FakeClock) -> None:
    machine = machine_in(State.QUARANTINE, clock)
    assert machine.report(machine.check_ticket(), ALIVE) is None
    assert machine.state is State.QUARANTINE


def test_failed_probe_doubles_the_cooldown_up_to_the_cap(clock: FakeClock) -> None:
    machine = machine_in(State.QUARANTINE, clock)
    seen = []
    for _ in range(3):
        clock.advance(machine.cooldown_left())
        machine.report(machine.probe_ticket(), ERROR)
        seen.append(machine.cooldown_s)
        assert machine.state is State.QUARANTINE
        assert machine.cooldown_left() == machine.cooldown_s
    assert seen == [20, 35, 35]
    assert machine.history[-1].reason.endswith("cooldown extended to 35 s")


def test_quarantine_indeterminate_becomes_unhealthy(clock: FakeClock) -> None:
    machine = machine_in(State.QUARANTINE, clock)
    clock.advance(10)
    machine.report(machine.probe_ticket(), UNSURE)
    assert machine.state is State.UNHEALTHY


def test_quarantine_holds_when_the_connection_is_lost(clock: FakeClock) -> None:
    machine = machine_in(State.QUARANTINE, clock)
    assert machine.report(None, LOST) is None
    assert machine.state is State.QUARANTINE


# --- PROBATION ---------------------------------------------------------------------------------------


def test_probation_admits_exactly_one_request_at_a_time(clock: FakeClock) -> None:
    machine = machine_in(State.PROBATION, clock)
    trial = machine.admit()
    assert trial is not None and trial.trial
    assert [machine.admit() for _ in range(19)] == [None] * 19
    assert machine.check_ticket() is None
    assert machine.why_not() == "search-a on probation: its one trial request is in flight"
    assert machine.routable


def test_probation_trial_success_becomes_healthy_and_resets_the_cooldown(clock: FakeClock) -> None:
    machine = machine_in(State.PROBATION, clock)
    trial = machine.admit()
    machine.report(trial, CALLED)
    assert machine.state is State.HEALTHY
    assert machine.history[-1].reason == "trial request succeeded (call work)"
    assert machine.cooldown_s == POLICY.cooldown_s


def test_probation_trial_failure_requarantines_with_a_longer_cooldown(clock: FakeClock) -> None:
    machine = machine_in(State.PROBATION, clock)
    machine.report(machine.admit(), TIMEOUT)
    assert machine.state is State.QUARANTINE
    assert machine.cooldown_s == 20
    assert machine.cooldown_left() == 20
    clock.advance(20)
    machine.report(machine.probe_ticket(), ALIVE)
    machine.report(machine.admit(), TIMEOUT)
    assert machine.cooldown_s == 35  # doubled to 40, capped at cooldown_max_s
    assert machine.why_not().startswith("search-a quarantined: trial request failed (timeout: ")


def test_probation_lost_connection_requarantines(clock: FakeClock) -> None:
    machine = machine_in(State.PROBATION, clock)
    machine.report(None, LOST)
    assert machine.state is State.QUARANTINE and machine.cooldown_s == 20


def test_probation_indeterminate_becomes_unhealthy(clock: FakeClock) -> None:
    machine = machine_in(State.PROBATION, clock)
    machine.report(machine.admit(), UNSURE)
    assert machine.state is State.UNHEALTHY


def test_a_trial_that_never_left_frees_the_slot(clock: FakeClock) -> None:
    machine = machine_in(State.PROBATION, clock)
    trial = machine.admit()
    assert trial is not None
    machine.release(trial)
    assert machine.admit() is not None


def test_the_whole_cycle_back_to_healthy(clock: FakeClock) -> None:
    machine = machine_in(State.PROBATION, clock)
    machine.report(machine.admit(), CALLED)
    assert moves(machine) == [
        (State.STARTING, State.HEALTHY),
        (State.HEALTHY, State.QUARANTINE),
        (State.QUARANTINE, State.PROBATION),
        (State.PROBATION, State.HEALTHY),
    ]


# --- the machinery -----------------------------------------------------------------------------------


def test_the_table_covers_every_state_and_signal() -> None:
    assert set(TABLE) == {(state, signal) for state in State for signal in Signal}


def test_only_healthy_and_probation_are_routable(clock: FakeClock) -> None:
    routable = {state for state in State if machine_in(state, clock).admit() is not None}
    assert routable == {State.HEALTHY, State.PROBATION}


def test_evidence_from_before_the_last_transition_is_ignored(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    early = machine.admit()
    for _ in range(3):
        machine.report(machine.admit(), TIMEOUT)
    assert machine.state is State.QUARANTINE
    assert machine.report(early, TIMEOUT) is None
    assert machine.cooldown_s == POLICY.cooldown_s


def test_a_stale_trial_ticket_cannot_free_a_newer_trial(clock: FakeClock) -> None:
    machine = machine_in(State.PROBATION, clock)
    old = machine.admit()
    machine.report(None, LOST)
    clock.advance(machine.cooldown_left())
    machine.report(machine.probe_ticket(), ALIVE)
    assert machine.admit() is not None
    assert old is not None
    machine.release(old)
    machine.report(old, ALIVE)
    assert machine.admit() is None
    assert machine.state is State.PROBATION


def test_listeners_hear_every_transition_and_history_is_bounded(clock: FakeClock) -> None:
    machine = HealthMachine("a", POLICY, clock, history=4)
    heard: list[Transition] = []
    machine.subscribe(heard.append)
    for _ in range(5):
        machine.report(machine.check_ticket(), CAPABLE)  # a passing capability check ends each streak
        machine.report(None, LOST)
    assert len(heard) == 10
    assert list(machine.history) == heard[-4:]
    assert all(t.wall.endswith("Z") and t.reason for t in heard)


def test_a_ticket_remembers_its_generation(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    assert machine.admit() == Ticket(machine.generation)


# --- only a working call ends a streak (liveness/readiness show life, not working calls) --------------


def test_pings_between_timed_out_calls_do_not_break_the_streak(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    for evidence in (TIMEOUT, ALIVE, TIMEOUT, ALIVE):
        ticket = machine.admit() if evidence is TIMEOUT else machine.check_ticket()
        assert machine.report(ticket, evidence) is None
    assert machine.state is State.HEALTHY and machine.failures == 2
    transition = machine.report(machine.admit(), TIMEOUT)
    assert transition is not None and transition.target is State.QUARANTINE
    assert transition.reason == "3 consecutive timeouts"


def test_a_passing_capability_check_breaks_the_streak(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    machine.report(machine.admit(), TIMEOUT)
    machine.report(machine.admit(), TIMEOUT)
    machine.report(machine.check_ticket(), CAPABLE)
    assert machine.failures == 0
    machine.report(machine.admit(), TIMEOUT)
    assert machine.state is State.HEALTHY and machine.failures == 1


def test_the_streak_survives_crash_and_restart(clock: FakeClock) -> None:
    """A tool that kills its process: each restart passes its checks, the streak still grows."""
    machine = machine_in(State.HEALTHY, clock)
    for _ in range(2):
        machine.report(None, LOST)
        transition = machine.report(machine.check_ticket(), ALIVE)
        assert transition is not None and transition.target is State.HEALTHY
        assert transition.reason.endswith("failure(s) in a row kept until a call succeeds")
    assert machine.failures == 2
    machine.report(None, LOST)
    assert machine.state is State.QUARANTINE
    assert machine.history[-1].reason == "3 consecutive lost connections"


def test_a_capability_pass_after_a_restart_clears_the_streak(clock: FakeClock) -> None:
    machine = machine_in(State.HEALTHY, clock)
    machine.report(None, LOST)
    transition = machine.report(machine.check_ticket(), CAPABLE)
    assert transition is not None and transition.reason == "checks passed (liveness, readiness, capability)"
    assert machine.failures == 0


def test_an_unhealthy_retry_keeps_the_streak_unless_a_capability_check_passed(clock: FakeClock) -> None:
    machine = machine_in(State.UNHEALTHY, clock)
    machine.report(machine.check_ticket(), ALIVE)
    assert machine.state is State.PROBATION and machine.failures == 1
    other = machine_in(State.UNHEALTHY, clock)
    other.report(other.check_ticket(), CAPABLE)
    assert other.state is State.PROBATION and other.failures == 0


def test_probation_checks_alone_keep_the_streak_and_the_next_failure_reopens_longer(
    clock: FakeClock,
) -> None:
    machine = machine_in(State.PROBATION, clock)
    transition = machine.report(machine.check_ticket(), ALIVE)
    assert transition is not None and transition.target is State.HEALTHY
    assert transition.reason.startswith("trial checks passed (liveness, readiness)")
    assert machine.failures == 3 and machine.cooldown_s == 10
    reopened = machine.report(machine.admit(), TIMEOUT)
    assert reopened is not None and reopened.target is State.QUARANTINE
    assert reopened.reason == "4 consecutive timeouts"
    assert machine.cooldown_s == 20, "re-opened before any call succeeded: the cooldown doubles"


def test_a_successful_call_after_quarantine_forgets_the_streak_and_the_cooldown(clock: FakeClock) -> None:
    machine = machine_in(State.PROBATION, clock)
    machine.report(machine.admit(), TIMEOUT)
    assert machine.failures == 4 and machine.cooldown_s == 20
    clock.advance(machine.cooldown_left())
    machine.report(machine.probe_ticket(), ALIVE)
    machine.report(machine.admit(), CALLED)
    assert machine.state is State.HEALTHY
    assert (machine.failures, machine.cooldown_s) == (0, POLICY.cooldown_s)
