"""One downstream server: its connection (restarted with backoff), its checks, its health.

`run()` is the supervisor: connect, check on schedule until the connection ends, wait out the
backoff, connect again. A connection that ends is reported at once (the transport's read stream
closing), so the server leaves routing before the next call arrives. Real calls go through
`call()`, whose outcome counts with the checks' outcomes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from functools import partial
from itertools import count

import anyio
import mcp_types as types

from colibri.switchboard.base import (
    Caller,
    ConnectFailed,
    ConnectionLost,
    DownstreamError,
    DownstreamSession,
    Hooks,
    Notified,
)
from colibri.switchboard.config import ServerSpec, for_principal
from colibri.switchboard.downstream.calls import Calling
from colibri.switchboard.downstream.catalog import Catalog
from colibri.switchboard.downstream.exchange import pool
from colibri.switchboard.downstream.results import OutputSchemas
from colibri.switchboard.health import (
    CheckKind,
    CheckRecord,
    Clock,
    Counters,
    Evidence,
    HealthMachine,
    Prober,
    Signal,
    State,
    Ticket,
    Transition,
    restart_delay,
)

log = logging.getLogger("colibri.switchboard")

CONNECT_TIMEOUT_S = 10.0

# Opens a connection to a server (transport.open_session; tests inject their own): the spec, what
# the connection reports to its owner, and how long its handshake may take.
Connector = Callable[[ServerSpec, Hooks, float], AbstractAsyncContextManager[DownstreamSession]]


class Downstream(Calling):
    """A supervised connection to one downstream and everything known about its health."""

    def __init__(self, spec: ServerSpec, connector: Connector, clock: Clock) -> None:
        self.spec = spec
        self.name = spec.name
        self.machine = HealthMachine(spec.name, spec.health, clock)
        self.machine.subscribe(self._on_transition)
        self.session: DownstreamSession | None = None
        self.tools: dict[str, types.Tool] = {}
        self.catalog = Catalog()
        # The client requests whose calls are in flight here. What the downstream sends in the
        # course of a call goes to that call's own (owners.py), never to another in this list.
        self.callers: list[Caller] = []
        # "isolate": "principal": this is the shared process; each principal's calls go to its own.
        # An exchange server: this is the switchboard's own connection; each principal has its own.
        self.isolated = pool(spec, lambda own: Downstream(own, connector, clock))
        self._connect_spec = for_principal(spec, None) if spec.isolate else spec
        self.notified: Notified | None = None
        # Resource URIs clients subscribed to through this server: a new connection subscribes again.
        self.subscriptions: set[str] = set()
        self.counters = Counters()
        self.prober = Prober(spec, self.machine, clock, self.counters, self._listed)
        self.checks: dict[CheckKind, CheckRecord] = self.prober.checks
        self.settled = self.prober.settled
        self._schemas = OutputSchemas()
        self._connector = connector
        self._clock = clock
        self._tokens = count(1)
        self._live_token = 0
        self._watch_scope: anyio.CancelScope | None = None
        self._listeners: list[Callable[[], None]] = []

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener()` whenever the state or the tool list of this downstream changes."""
        self._listeners.append(listener)

    # --- the supervisor --------------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, watch, reconnect with backoff; runs until cancelled (with the principals' own
        processes of an isolated server)."""
        if self.isolated is None:
            await self._supervise()
            return
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.isolated.run)
            await self._supervise()

    async def _supervise(self) -> None:
        policy = self.spec.health
        attempt = 0
        while True:
            await self._wait_for_probe()
            ticket = self.machine.probe_ticket() if self.machine.state is State.QUARANTINE else None
            started = self._clock()
            token = next(self._tokens)
            hooks = Hooks(
                closed=partial(self._lost, token),
                tools_changed=self.prober.tools_changed,
                lists_changed=self.prober.tools_changed,
                notified=self._notified,
                sole=self._sole,
            )
            try:
                async with self._connector(
                    self._connect_spec, hooks, max(CONNECT_TIMEOUT_S, policy.check_timeout_s)
                ) as s:
                    await self._watch(token, s)
            except ConnectFailed as exc:
                self._connect_failed(ticket, exc)
            except ConnectionLost as exc:
                self._lost(token, exc.message)
            finally:
                self._live_token = 0
                self.session = None
            # A connection that stayed up longer than the longest backoff starts the doubling afresh.
            lived = self._clock() - started
            attempt = 1 if lived >= policy.restart_backoff_max_s else attempt + 1
            delay = restart_delay(attempt, policy)
            log.info("%s: reconnecting in %.2f s", self.name, delay)
            await anyio.sleep(delay)

    async def _wait_for_probe(self) -> None:
        while self.machine.state is State.QUARANTINE and not self.machine.probe_due():
            await self.prober.sleep_or_wake(self.machine.cooldown_left())

    async def _watch(self, token: int, session: DownstreamSession) -> None:
        self.counters.connects += 1
        self.session = session
        self._live_token = token
        log.info(
            "%s: connected (protocol %s, server %s)", self.name, session.protocol_version, session.server_name
        )
        if session.is_closed:
            self._lost(token, "the connection closed during the handshake")
            return
        try:
            async with anyio.create_task_group() as tasks:
                self._watch_scope = tasks.cancel_scope
                tasks.start_soon(self.prober.run, session)
                if self.subscriptions:
                    tasks.start_soon(self._resubscribe, session)
                await session.wait_closed()
                tasks.cancel_scope.cancel()
        finally:
            self._watch_scope = None

    async def _resubscribe(self, session: DownstreamSession) -> None:
        """A restarted server has forgotten its subscriptions; the clients still hold theirs."""
        for uri in sorted(self.subscriptions):
            request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri))
            try:
                await session.request(request, types.EmptyResult, self.spec.health.check_timeout_s)
            except DownstreamError as exc:
                log.warning("%s: could not subscribe to %s again: %s", self.name, uri, exc.message)

    def _lost(self, token: int, reason: str) -> None:
        if token != self._live_token:
            return
        self._live_token = 0
        self.session = None
        if self._watch_scope is not None:
            # No check may run, or report, against the connection that just ended.
            self._watch_scope.cancel()
        log.warning("%s: %s", self.name, reason)
        self.counters.connect_failures += 1  # the streak counts a lost connection: so does the total
        self.machine.report(None, Evidence(Signal.LOST, "lost connection", reason))

    def _connect_failed(self, ticket: Ticket | None, error: ConnectFailed) -> None:
        self.counters.connect_failures += 1
        log.warning("%s: %s", self.name, error.message)
        self.machine.report(ticket, Evidence(Signal.FAIL, error.kind, error.message))
        self.settled.set()

    # --- listeners -------------------------------------------------------------------------------

    def _on_transition(self, transition: Transition) -> None:
        level = logging.INFO if transition.target in (State.HEALTHY, State.STARTING) else logging.WARNING
        log.log(level, "%s: %s -> %s: %s", self.name, transition.source, transition.target, transition.reason)
        self.prober.timeline.entered = transition.at
        if transition.target is State.HEALTHY:
            self.prober.timeline.checked_all(transition.at)
        self.prober.wake()
        self._notify()

    async def _listed(self, session: DownstreamSession, tools: list[types.Tool]) -> None:
        """A readiness check listed `tools`: keep those the filter lets through, and the other lists."""
        # A filtered tool is never listed and, since routing needs a listed tool, never callable.
        listed = {tool.name: tool for tool in tools if self.spec.offers(tool.name)}
        if listed != self.tools:
            self.tools = listed
            self._notify()
        if await self.catalog.refresh(session, self.spec.health.check_timeout_s):
            self._notify()

    def _notify(self) -> None:
        for listener in self._listeners:
            listener()
