"""The rules of the health machine: one function per (state, signal), chosen by `TABLE`.

A rule reads and changes its machine through `Machine`, the part of `HealthMachine` (machine.py)
the rules use; the machine imports this table, so the table names what it needs instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from colibri.switchboard.health.states import Evidence, Move, Signal, State


class Machine(Protocol):
    """What the rules read and change of a `HealthMachine`: its streak, its cooldown, its effects."""

    failures: int
    cooldown_s: float
    _open_reason: str

    def cooldown_left(self) -> float: ...

    def _count(self, evidence: Evidence) -> bool: ...

    def _clear_streak(self) -> None: ...

    def _proven(self) -> None: ...

    def _open(self) -> Move: ...

    def _lengthen_cooldown(self) -> None: ...


Rule = Callable[[Machine, Evidence], Move | None]


# --- the rules ---------------------------------------------------------------------------------------


def _checks_passed(m: Machine, e: Evidence) -> Move:
    if e.signal is Signal.PASS:
        m._proven()
    return Move(State.HEALTHY, f"checks passed{_suffix(e)}{_streak_kept(m)}")


def _start_failed(m: Machine, e: Evidence) -> Move:
    m._count(e)
    return Move(State.UNHEALTHY, f"start-up failed: {e.describe()}")


def _indeterminate(m: Machine, e: Evidence) -> Move:
    return Move(State.UNHEALTHY, f"indeterminate: {e.describe()}")


def _lost(m: Machine, e: Evidence) -> Move:
    if m._count(e):
        return m._open()
    return Move(State.STARTING, f"{e.describe()}; restarting")


def _still_healthy(m: Machine, e: Evidence) -> None:
    m._proven()


def _still_alive(m: Machine, e: Evidence) -> None:
    """A ping between failing calls shows the process lives, not that calls work: keep the streak."""
    return None


def _failure_while_healthy(m: Machine, e: Evidence) -> Move | None:
    return m._open() if m._count(e) else None


def _still_unhealthy(m: Machine, e: Evidence) -> None:
    m._count(e)


def _retry_passed(m: Machine, e: Evidence) -> Move:
    if e.signal is Signal.PASS:
        m._clear_streak()
    return Move(State.PROBATION, f"retry passed{_suffix(e)}; admitting one trial request")


def _probe_passed(m: Machine, e: Evidence) -> Move | None:
    if m.cooldown_left() > 0:
        return None
    if e.signal is Signal.PASS:
        m._clear_streak()
    return Move(
        State.PROBATION, f"cooldown elapsed and probe passed{_suffix(e)}; admitting one trial request"
    )


def _probe_failed(m: Machine, e: Evidence) -> Move:
    m._lengthen_cooldown()
    return Move(State.QUARANTINE, f"probe failed: {e.describe()}; cooldown extended to {m.cooldown_s:g} s")


def _quarantine_holds(m: Machine, e: Evidence) -> None:
    return None


def _trial_passed(m: Machine, e: Evidence) -> Move:
    m._proven()
    return Move(State.HEALTHY, f"trial request succeeded{_suffix(e)}")


def _trial_checks_passed(m: Machine, e: Evidence) -> Move:
    return Move(State.HEALTHY, f"trial checks passed{_suffix(e)}{_streak_kept(m)}")


def _trial_failed(m: Machine, e: Evidence) -> Move:
    m._count(e)
    m._lengthen_cooldown()
    m._open_reason = f"trial request failed ({e.describe()})"
    return Move(State.QUARANTINE, f"{m._open_reason}; cooldown {m.cooldown_s:g} s")


def _suffix(e: Evidence) -> str:
    return f" ({e.detail})" if e.detail else ""


def _streak_kept(m: Machine) -> str:
    return f"; {m.failures} failure(s) in a row kept until a call succeeds" if m.failures else ""


S, G = State, Signal
TABLE: dict[tuple[State, Signal], Rule] = {
    (S.STARTING, G.PASS): _checks_passed,
    (S.STARTING, G.ALIVE): _checks_passed,
    (S.STARTING, G.FAIL): _start_failed,
    (S.STARTING, G.INDETERMINATE): _indeterminate,
    (S.STARTING, G.LOST): _lost,
    (S.HEALTHY, G.PASS): _still_healthy,
    (S.HEALTHY, G.ALIVE): _still_alive,
    (S.HEALTHY, G.FAIL): _failure_while_healthy,
    (S.HEALTHY, G.INDETERMINATE): _indeterminate,
    (S.HEALTHY, G.LOST): _lost,
    (S.UNHEALTHY, G.PASS): _retry_passed,
    (S.UNHEALTHY, G.ALIVE): _retry_passed,
    (S.UNHEALTHY, G.FAIL): _still_unhealthy,
    (S.UNHEALTHY, G.INDETERMINATE): _still_unhealthy,
    (S.UNHEALTHY, G.LOST): _lost,
    (S.QUARANTINE, G.PASS): _probe_passed,
    (S.QUARANTINE, G.ALIVE): _probe_passed,
    (S.QUARANTINE, G.FAIL): _probe_failed,
    (S.QUARANTINE, G.INDETERMINATE): _indeterminate,
    (S.QUARANTINE, G.LOST): _quarantine_holds,
    (S.PROBATION, G.PASS): _trial_passed,
    (S.PROBATION, G.ALIVE): _trial_checks_passed,
    (S.PROBATION, G.FAIL): _trial_failed,
    (S.PROBATION, G.INDETERMINATE): _indeterminate,
    (S.PROBATION, G.LOST): _trial_failed,
}
