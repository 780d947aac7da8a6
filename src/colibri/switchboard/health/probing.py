"""The check loop of one downstream (SPEC §7): when to run which check, and what each one found.

A `Prober` runs on one open connection at a time (its owner, downstream/supervisor.py, starts it
for each connection) and reports every verdict to the server's `HealthMachine`. What a readiness
check lists is handed to the owner's `Listed` callback: the tools and the other lists belong to the
connection's owner, not to the checks.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
import mcp_types as types

from colibri.switchboard.base import DownstreamSession
from colibri.switchboard.config import ServerSpec
from colibri.switchboard.health.checks import Checked, CheckKind, CheckRecord, run_check
from colibri.switchboard.health.machine import Clock, HealthMachine
from colibri.switchboard.health.schedule import Timeline, plan
from colibri.switchboard.health.states import Evidence, Signal, State, Ticket

log = logging.getLogger("colibri.switchboard")

# What a passed readiness check listed, for the owner: the session it came over and its tools.
Listed = Callable[[DownstreamSession, list[types.Tool]], Awaitable[None]]


@dataclass(slots=True)
class Counters:
    """Totals since the switchboard started."""

    calls: int = 0
    call_failures: int = 0
    checks: int = 0
    check_failures: int = 0
    connects: int = 0
    connect_failures: int = 0  # connections that failed to open, or were lost

    @property
    def restarts(self) -> int:
        return max(0, self.connects - 1)


class Prober:
    """Runs the checks of one downstream on schedule and reports what they show to its machine."""

    def __init__(
        self, spec: ServerSpec, machine: HealthMachine, clock: Clock, counters: Counters, listed: Listed
    ) -> None:
        self.spec = spec
        self.machine = machine
        self.counters = counters
        self.checks: dict[CheckKind, CheckRecord] = {}
        self.timeline = Timeline()
        # Set once the server has had its first verdict (a round, or a failed connection).
        self.settled = anyio.Event()
        self._clock = clock
        self._listed = listed
        self._wake = anyio.Event()

    async def run(self, session: DownstreamSession) -> None:
        """Check `session` on schedule until cancelled (the connection's end cancels it)."""
        policy = self.spec.health
        has_deep = self.spec.deep is not None
        while True:
            step = plan(
                self.machine.state,
                self._clock(),
                timeline=self.timeline,
                policy=policy,
                has_deep=has_deep,
                cooldown_left=self.machine.cooldown_left(),
            )
            if step.wait > 0:
                await self.sleep_or_wake(step.wait)
            elif step.round:
                await self._round(session, step.kinds)
            else:
                for kind in step.kinds:
                    await self._single(session, kind)

    def wake(self) -> None:
        """Plan again now: the state changed, or something asked for a check."""
        self._wake.set()

    def tools_changed(self) -> None:
        """The server says its lists changed: run readiness (which lists them) again now."""
        self.timeline.last.pop(CheckKind.READINESS, None)
        self.wake()

    def want_capability(self) -> None:
        """A call or check failed: run the capability check soon (when there is one)."""
        if self.spec.deep is not None:
            self.timeline.capability_wanted = True
            self.wake()

    async def sleep_or_wake(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            await self._wake.wait()
        if self._wake.is_set():
            self._wake = anyio.Event()

    async def _single(self, session: DownstreamSession, kind: CheckKind) -> None:
        ticket = self.machine.check_ticket()
        if kind is CheckKind.CAPABILITY:
            self.timeline.capability_wanted = False
        checked = await self._check(session, kind)
        if ticket is not None:
            self.machine.report(ticket, checked.record.evidence)
        if not checked.record.ok and kind is not CheckKind.CAPABILITY:
            self.want_capability()

    async def _round(self, session: DownstreamSession, kinds: tuple[CheckKind, ...]) -> None:
        """Every kind in turn, stopping at the first that does not pass; one verdict."""
        if self.machine.state is State.QUARANTINE:
            if not self.machine.probe_due():
                return
            ticket: Ticket | None = self.machine.probe_ticket()
        else:
            ticket = self.machine.check_ticket()
        self.timeline.last_round = self._clock()
        if ticket is None:  # a real call holds the trial slot of PROBATION
            return
        # Only a capability check that passed proves calls work; liveness and readiness show life.
        proven = False
        verdict: Evidence | None = None
        for kind in kinds:
            checked = await self._check(session, kind)
            if not checked.record.ok:
                verdict = checked.record.evidence
                break
            proven = proven or checked.record.evidence.signal is Signal.PASS
        if verdict is None:
            verdict = Evidence(Signal.PASS if proven else Signal.ALIVE, detail=", ".join(kinds))
        self.timeline.last_round = self._clock()
        self.machine.report(ticket, verdict)
        self.settled.set()

    async def _check(self, session: DownstreamSession, kind: CheckKind) -> Checked:
        checked = await run_check(kind, session, self.spec.health.check_timeout_s, self.spec.deep)
        self.timeline.last[kind] = self._clock()
        self.checks[kind] = checked.record
        self.counters.checks += 1
        if not checked.record.ok:
            self.counters.check_failures += 1
            log.info("%s: %s", self.spec.name, checked.record.evidence.describe())
        elif checked.tools is not None:
            await self._listed(session, checked.tools)
        return checked
