"""The health state machine of one downstream (SPEC §7). `rules.TABLE` is the one place that decides moves.

    STARTING --pass--> HEALTHY                 STARTING --fail--> UNHEALTHY --pass--> PROBATION
    HEALTHY --N consecutive failures--> QUARANTINE (circuit open, reason recorded)
    QUARANTINE --cooldown elapsed + probe passes--> PROBATION
    QUARANTINE --probe fails--> QUARANTINE with the cooldown doubled (capped)
    PROBATION --its one trial succeeds--> HEALTHY
    PROBATION --trial fails or connection lost--> QUARANTINE with the cooldown doubled (capped)
    any --indeterminate--> UNHEALTHY           a lost connection --> STARTING (it is restarted),
                                               or QUARANTINE once it completes N consecutive failures

Two kinds of good news: PASS (a real call or the capability check succeeded) proves that calls
work; ALIVE (liveness/readiness passed) proves only that the process answers. ALIVE moves a server
through the states as PASS does, but only PASS clears the failure streak and resets the cooldown:
a server whose calls keep timing out while its pings answer, or whose process dies on every call
and comes back healthy after each restart, must still reach the quarantine threshold. The streak
survives restarts and quarantine; a server re-opened before any call succeeded has its cooldown
doubled, as a failed trial would.

Time comes from an injected monotonic clock, so every move is testable without sleeping. Evidence
gathered under an older generation (a call sent before the last transition) no longer decides
anything: it describes a state the server has already left.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from colibri.core.clock import utc_now
from colibri.switchboard.base import IllegalTransition
from colibri.switchboard.config import HealthPolicy
from colibri.switchboard.health.rules import TABLE
from colibri.switchboard.health.states import ROUTABLE, Evidence, Move, Signal, State, Ticket, Transition

Clock = Callable[[], float]
HISTORY_SIZE = 50


Listener = Callable[[Transition], None]


class HealthMachine:
    """State, failure streak, cooldown and trial slot of one downstream."""

    def __init__(self, name: str, policy: HealthPolicy, clock: Clock, history: int = HISTORY_SIZE) -> None:
        self.name = name
        self.policy = policy
        self._clock = clock
        self.state = State.STARTING
        self.generation = 0
        self.failures = 0
        self.cooldown_s = policy.cooldown_s
        self.last_failure: Evidence | None = None
        self.history: deque[Transition] = deque(maxlen=history)
        self._streak: deque[str] = deque(maxlen=policy.failures_to_quarantine)
        self._opened_at = 0.0
        self._open_reason = ""
        self._reason = "not checked yet"
        self._trial_in_flight = False
        self._listeners: list[Listener] = []

    # --- reading ---------------------------------------------------------------------------------

    @property
    def routable(self) -> bool:
        return self.state in ROUTABLE

    @property
    def trial_in_flight(self) -> bool:
        return self._trial_in_flight

    def cooldown_left(self) -> float:
        if self.state is not State.QUARANTINE:
            return 0.0
        return max(0.0, self._opened_at + self.cooldown_s - self._clock())

    def probe_due(self) -> bool:
        return self.state is State.QUARANTINE and self.cooldown_left() == 0.0

    def why_not(self) -> str:
        """Why a call cannot be routed here now (empty when it can)."""
        if self.state is State.HEALTHY or (self.state is State.PROBATION and not self._trial_in_flight):
            return ""
        if self.state is State.PROBATION:
            return f"{self.name} on probation: its one trial request is in flight"
        if self.state is State.QUARANTINE:
            return (
                f"{self.name} quarantined: {self._open_reason} (next probe in {self.cooldown_left():.1f} s)"
            )
        if self.state is State.UNHEALTHY:
            return f"{self.name} unhealthy: {self._reason}"
        return f"{self.name} is starting: {self._reason}"

    # --- admission -------------------------------------------------------------------------------

    def admit(self) -> Ticket | None:
        """A ticket for one routed call, or None when this server must not get it (see `why_not`)."""
        if self.state is State.HEALTHY:
            return Ticket(self.generation)
        if self.state is State.PROBATION and not self._trial_in_flight:
            self._trial_in_flight = True
            return Ticket(self.generation, trial=True)
        return None

    def check_ticket(self) -> Ticket | None:
        """A ticket for a health check; in PROBATION a check is a trial and needs the free slot."""
        if self.state is State.PROBATION:
            return self.admit()
        return Ticket(self.generation)

    def probe_ticket(self) -> Ticket:
        """The ticket for the probe that may end a QUARANTINE whose cooldown has elapsed."""
        if not self.probe_due():
            raise IllegalTransition(
                self.state, "probe", ["probe after the cooldown"] if self.state is State.QUARANTINE else []
            )
        return Ticket(self.generation)

    # --- evidence --------------------------------------------------------------------------------

    def report(self, ticket: Ticket | None, evidence: Evidence) -> Transition | None:
        """Apply evidence; `ticket` None means it is about the present (a connection event)."""
        if ticket is not None:
            if ticket.generation != self.generation:
                return None
            self.release(ticket)
        if evidence.signal not in (Signal.PASS, Signal.ALIVE):
            self.last_failure = evidence
        move = TABLE[(self.state, evidence.signal)](self, evidence)
        return None if move is None else self._enter(move)

    def release(self, ticket: Ticket) -> None:
        """Give back a ticket whose request never left; a stale one holds nothing any more."""
        if ticket.trial and ticket.generation == self.generation:
            self._trial_in_flight = False

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    # --- effects used by the rules ---------------------------------------------------------------

    def _enter(self, move: Move) -> Transition:
        transition = Transition(self._clock(), utc_now(), self.state, move.target, move.reason)
        self.state = move.target
        self.generation += 1
        self._trial_in_flight = False
        self._reason = move.reason
        if move.target is State.QUARANTINE:
            self._opened_at = transition.at
        self.history.append(transition)
        for listener in self._listeners:
            listener(transition)
        return transition

    def _count(self, evidence: Evidence) -> bool:
        """Add a failure to the streak; True when the streak reaches the quarantine threshold."""
        self.failures += 1
        self._streak.append(evidence.kind or "failure")
        return self.failures >= self.policy.failures_to_quarantine

    def _clear_streak(self) -> None:
        self.failures = 0
        self._streak.clear()

    def _proven(self) -> None:
        """Calls work again: forget the streak and the lengthened cooldown."""
        self._clear_streak()
        self.cooldown_s = self.policy.cooldown_s

    def _streak_reason(self) -> str:
        kinds = list(self._streak)
        if kinds and all(kind == kinds[0] for kind in kinds):
            return f"{self.failures} consecutive {kinds[0]}s"
        return f"{self.failures} consecutive failures ({', '.join(kinds)})"

    def _open(self) -> Move:
        if self.failures > self.policy.failures_to_quarantine:
            # Quarantined before and no call has succeeded since: open for longer.
            self._lengthen_cooldown()
        self._open_reason = self._streak_reason()
        return Move(State.QUARANTINE, self._open_reason)

    def _lengthen_cooldown(self) -> None:
        self.cooldown_s = min(self.cooldown_s * 2, self.policy.cooldown_max_s)
