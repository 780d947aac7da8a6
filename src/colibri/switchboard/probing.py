"""The health checks of one downstream (SPEC §7): when to run which check, and what each one found.

`Downstream` (downstream.py) inherits these; they are apart only to keep each module small.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio
import mcp_types as types

from colibri.switchboard.catalog import Catalog
from colibri.switchboard.checks import Checked, CheckKind, CheckRecord, run_check
from colibri.switchboard.config import ServerSpec
from colibri.switchboard.contracts import DownstreamSession
from colibri.switchboard.schedule import Timeline, plan
from colibri.switchboard.states import Clock, Evidence, HealthMachine, Signal, State, Ticket

log = logging.getLogger("colibri.switchboard")


@dataclass(slots=True)
class Counters:
    """Totals since the switchboard started."""

    calls: int = 0
    call_failures: int = 0
    checks: int = 0
    check_failures: int = 0
    connects: int = 0
    connect_failures: int = 0

    @property
    def restarts(self) -> int:
        return max(0, self.connects - 1)


class HealthChecking:
    """The check loop of a downstream; the state it reads and writes is the Downstream's."""

    spec: ServerSpec
    name: str
    machine: HealthMachine
    tools: dict[str, types.Tool]
    catalog: Catalog
    checks: dict[CheckKind, CheckRecord]
    counters: Counters
    settled: anyio.Event
    _clock: Clock
    _timeline: Timeline
    _wake: anyio.Event

    def _notify(self) -> None:
        raise NotImplementedError  # Downstream tells its listeners

    async def _check_forever(self, session: DownstreamSession) -> None:
        policy = self.spec.health
        has_deep = self.spec.deep is not None
        while True:
            step = plan(
                self.machine.state,
                self._clock(),
                timeline=self._timeline,
                policy=policy,
                has_deep=has_deep,
                cooldown_left=self.machine.cooldown_left(),
            )
            if step.wait > 0:
                await self._sleep_or_wake(step.wait)
            elif step.round:
                await self._round(session, step.kinds)
            else:
                for kind in step.kinds:
                    await self._single(session, kind)

    async def _single(self, session: DownstreamSession, kind: CheckKind) -> None:
        ticket = self.machine.check_ticket()
        if kind is CheckKind.CAPABILITY:
            self._timeline.capability_wanted = False
        checked = await self._check(session, kind)
        if ticket is not None:
            self.machine.report(ticket, checked.record.evidence)
        if not checked.record.ok and kind is not CheckKind.CAPABILITY:
            self._want_capability()

    async def _round(self, session: DownstreamSession, kinds: tuple[CheckKind, ...]) -> None:
        """Every kind in turn, stopping at the first that does not pass; one verdict."""
        if self.machine.state is State.QUARANTINE:
            if not self.machine.probe_due():
                return
            ticket: Ticket | None = self.machine.probe_ticket()
        else:
            ticket = self.machine.check_ticket()
        self._timeline.last_round = self._clock()
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
        self._timeline.last_round = self._clock()
        self.machine.report(ticket, verdict)
        self.settled.set()

    async def _check(self, session: DownstreamSession, kind: CheckKind) -> Checked:
        checked = await run_check(kind, session, self.spec.health.check_timeout_s, self.spec.deep)
        self._timeline.last[kind] = self._clock()
        self.checks[kind] = checked.record
        self.counters.checks += 1
        if not checked.record.ok:
            self.counters.check_failures += 1
            log.info("%s: %s", self.name, checked.record.evidence.describe())
        elif checked.tools is not None:
            self._set_tools(checked.tools)
            if await self.catalog.refresh(session, self.spec.health.check_timeout_s):
                self._notify()
        return checked

    def _set_tools(self, tools: list[types.Tool]) -> None:
        # A filtered tool is never listed and, since routing needs a listed tool, never callable.
        listed = {tool.name: tool for tool in tools if self.spec.offers(tool.name)}
        if listed != self.tools:
            self.tools = listed
            self._notify()

    def _tools_changed(self) -> None:
        self._timeline.last.pop(CheckKind.READINESS, None)
        self._wake.set()

    def _want_capability(self) -> None:
        if self.spec.deep is not None:
            self._timeline.capability_wanted = True
            self._wake.set()

    async def _sleep_or_wake(self, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            await self._wake.wait()
        if self._wake.is_set():
            self._wake = anyio.Event()
