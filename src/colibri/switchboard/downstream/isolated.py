"""`"isolate": "principal"`: one downstream process per principal (SPEC §21).

An old-era stdio server says nothing of which call a log line or a request of its own belongs to
(owners.py); given a process of its own per principal, whatever it sends belongs to that principal,
and its `env` may carry that principal's own credentials (`${PRINCIPAL}`, config/expand.py).

The entry's own `Downstream` is the shared process: its health checks and its listing govern what
is listed and whether a call is admitted at all, as for any server; it runs with the switchboard's
own name and no principal's envFile. A principal's first call starts that principal's process (a
`Downstream` of its own, supervised and checked like any other), and the call waits for its first
verdict; the process stops once `idle_s` has passed without a call.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

import anyio

from colibri.switchboard.base import DownstreamSession, NotSent
from colibri.switchboard.config import ServerSpec, for_principal
from colibri.switchboard.health import HealthMachine, Ticket

log = logging.getLogger("colibri.switchboard")

T = TypeVar("T")
START_S = 30.0  # how long a call waits for its principal's new process to be checked


class Own(Protocol):
    """A principal's own connection, as the pool runs it (a `Downstream`)."""

    machine: HealthMachine
    session: DownstreamSession | None
    settled: anyio.Event

    async def run(self) -> None: ...


@dataclass(slots=True)
class _Child:
    downstream: Any
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    busy: int = 0
    last_used: float = field(default_factory=time.monotonic)


class Isolated:
    """The processes of one isolated server, one per principal, started on demand, stopped when idle."""

    def __init__(self, spec: ServerSpec, make: Callable[[ServerSpec], Own]) -> None:
        self.spec = spec
        self._make = make
        self._children: dict[str, _Child] = {}
        self._tasks: anyio.abc.TaskGroup | None = None

    @property
    def principals(self) -> list[str]:
        return sorted(self._children)

    async def run(self) -> None:
        """Supervise the principals' processes and stop the idle ones; runs until cancelled."""
        try:
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                while True:
                    # A check a quarter of `idle_s` apart: a process outlives its idle time by at most that.
                    await anyio.sleep(min(max(self.spec.idle_s / 4, 0.05), 30.0))
                    self._stop_idle()
        finally:
            self._tasks = None
            self._children.clear()

    async def call(
        self,
        principal: str | None,
        machine: HealthMachine,
        ticket: Ticket,
        send: Callable[[Any, Ticket], Awaitable[T]],
    ) -> T:
        """`send` the call to `principal`'s own process (started if need be) under a ticket of its own;
        `ticket`, the shared process's admission, is given back."""
        machine.release(ticket)  # admitted by the shared process's health; judged by its own
        name = principal or "local"
        child = self._child(name)
        child.busy += 1  # from now: a process still starting for this call is not idle
        try:
            with anyio.move_on_after(START_S):
                await child.downstream.settled.wait()
            if child.downstream.session is None:
                raise NotSent(f"{name}'s own process of {self.spec.name} could not be started")
            own = child.downstream.machine.check_ticket()
            if own is None:
                raise NotSent(f"{name}'s own process of {self.spec.name} is busy with its trial call")
            return await send(child.downstream, own)
        finally:
            child.busy -= 1
            child.last_used = time.monotonic()

    def _child(self, principal: str) -> _Child:
        child = self._children.get(principal)
        if child is None:
            if self._tasks is None:
                raise NotSent(f"{self.spec.name} is not running")
            try:
                spec = self.own_spec(principal)
            except ValueError as exc:
                raise NotSent(str(exc)) from None
            child = self._children[principal] = _Child(self._make(spec))
            self._tasks.start_soon(self._supervise, principal, child)
            log.info("%s: started the process of %s", self.spec.name, principal)
        return child

    def own_spec(self, principal: str) -> ServerSpec:
        """The entry as `principal`'s own process starts it (ValueError: it cannot)."""
        return replace(for_principal(self.spec, principal), isolate=False)

    def outlived(self, principal: str) -> bool:
        """Whether `principal`'s own connection must stop though not idle (exchange.py: its token ran out)."""
        return False

    async def _supervise(self, principal: str, child: _Child) -> None:
        try:
            with child.scope:
                await child.downstream.run()
        finally:
            if self._children.get(principal) is child:
                del self._children[principal]

    def _stop_idle(self) -> None:
        now = time.monotonic()
        for principal, child in list(self._children.items()):
            if child.busy == 0 and (now - child.last_used >= self.spec.idle_s or self.outlived(principal)):
                log.info(
                    "%s: stopped the process of %s (idle %.0f s)", self.spec.name, principal, self.spec.idle_s
                )
                del self._children[principal]
                child.scope.cancel()
