"""What the health machine (machine.py) reads and records: states, signals, evidence, moves."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class State(StrEnum):
    STARTING = "STARTING"
    HEALTHY = "HEALTHY"
    UNHEALTHY = "UNHEALTHY"
    QUARANTINE = "QUARANTINE"
    PROBATION = "PROBATION"


ROUTABLE = frozenset({State.HEALTHY, State.PROBATION})


class Signal(StrEnum):
    PASS = "pass"  # a real call or capability check succeeded: calls work
    ALIVE = "alive"  # liveness/readiness passed: the process answers, calls may still fail
    FAIL = "fail"
    INDETERMINATE = "indeterminate"
    LOST = "lost"


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one check, call or connection event showed; `kind` names a failure ("timeout", ...)."""

    signal: Signal
    kind: str = ""
    detail: str = ""

    def describe(self) -> str:
        return f"{self.kind}: {self.detail}" if self.kind and self.detail else self.detail or self.kind


@dataclass(frozen=True, slots=True)
class Transition:
    """One recorded move, with its reason."""

    at: float
    wall: str
    source: State
    target: State
    reason: str


@dataclass(frozen=True, slots=True)
class Ticket:
    """Permission for one request; `trial` marks the single request a PROBATION server admits."""

    generation: int
    trial: bool = False


@dataclass(frozen=True, slots=True)
class Move:
    target: State
    reason: str
