"""The switchboard: every supervised downstream, the router in front of them, and change news.

Independent of the faces that serve it (faces/); the clock, the downstream connector and the
`Observer`s of every routed call (metrics; later policy, rate limits, audit) are injected.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import mcp_types as types

from colibri.core.identity import Identity, identity_of
from colibri.switchboard.base import Caller, Notified
from colibri.switchboard.config import SwitchboardConfig
from colibri.switchboard.downstream import Connector, Downstream, open_session
from colibri.switchboard.health import Clock, State
from colibri.switchboard.routing.observers import LOCAL, Observer, Observers, RoutedCall, Who
from colibri.switchboard.routing.passthrough import Passthrough
from colibri.switchboard.routing.route import Route
from colibri.switchboard.routing.router import Router
from colibri.switchboard.routing.search import Search
from colibri.switchboard.routing.status import snapshot
from colibri.switchboard.routing.vouching import Vouching

log = logging.getLogger("colibri.switchboard")

ToolsChanged = Callable[[], Awaitable[None]]
ListsChanged = Callable[[str], Awaitable[None]]
LISTS = ("tools", "resources", "prompts")


class Switchboard:
    """Runs the downstreams; lists and routes what the faces (faces/) are asked."""

    def __init__(
        self,
        config: SwitchboardConfig,
        connector: Connector = open_session,
        clock: Clock = time.monotonic,
        observers: Sequence[Observer] = (),
    ) -> None:
        self.config = config
        self._connector = connector
        self._clock = clock
        self._tasks: anyio.abc.TaskGroup | None = None
        self._scopes: dict[str, anyio.CancelScope] = {}
        self.downstreams = {spec.name: Downstream(spec, connector, clock) for spec in config.enabled}
        self.observers = Observers(observers)
        self.router = Router(self.downstreams, config.fallbacks, self.status, self.observers)
        # Who signs the caller's statement to a downstream Colibri: `identity_key`, else the audit
        # store's key (set by the program, which opened the store), else nobody (SPEC §20).
        self.vouching = self.router.vouching = Vouching(config)
        self.passthrough = Passthrough(self.downstreams, self.observers)
        self.search = Search(
            lambda: self.config.tool_search,
            self.downstreams,
            self.observers,
            self.router.capability,
            lambda: self.router.fallbacks,
        )
        self.router.searching = self.search.own
        self._changed = anyio.Event()
        self._started = anyio.Event()
        self._subscribers: list[ToolsChanged] = []
        self._list_subscribers: list[ListsChanged] = []
        self._published = self._signatures()
        self.notified: Notified | None = None
        self.default_caller: Callable[[], Caller | None] = lambda: None
        self.observers.attach(self._mark_changed)
        for downstream in self.downstreams.values():
            self._adopt(downstream)

    def _adopt(self, downstream: Downstream) -> None:
        name = downstream.name
        self.observers.joined(name, downstream.machine.state)
        downstream.machine.subscribe(lambda transition: self.observers.moved(name, transition))
        downstream.on_change(lambda: self._changed_at(downstream))
        downstream.notified = self._notified

    def _changed_at(self, downstream: Downstream) -> None:
        # Its tools are shown to the observers first (pins): what is listed next takes their word.
        self.observers.listed(downstream.name, downstream.tools)
        self._mark_changed()

    async def _notified(self, server: str, notification: types.ServerNotification) -> None:
        if self.notified is not None:
            await self.notified(server, notification)

    def on_lists_changed(self, subscriber: ListsChanged) -> None:
        """Await `subscriber(kind)` whenever the listed resources or prompts change (kind names which)."""
        self._list_subscribers.append(subscriber)

    def on_tools_changed(self, subscriber: ToolsChanged) -> None:
        """Await `subscriber()` whenever the listed tools change."""
        self._subscribers.append(subscriber)

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Supervise every downstream until cancelled."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            for downstream in self.downstreams.values():
                self._start(downstream)
            tasks.start_soon(self._publish_changes)
            tasks.start_soon(self._start_up)
            task_status.started()

    async def started(self) -> None:
        """Return once every downstream has had its first verdict, or `startup_wait_s` has passed.

        A client that lists tools once at start-up (the Inspector CLI, many IDEs) would otherwise see
        only switchboard_status; after start-up this returns at once."""
        with anyio.move_on_after(self.config.startup_wait_s):
            await self._started.wait()

    async def _start_up(self) -> None:
        await self.settled(self.config.startup_wait_s)
        self._started.set()

    def _start(self, downstream: Downstream) -> None:
        scope = anyio.CancelScope()
        self._scopes[downstream.name] = scope

        async def supervise() -> None:
            with scope:
                await downstream.run()

        assert self._tasks is not None
        self._tasks.start_soon(supervise, name=f"downstream {downstream.name}")

    async def apply(self, config: SwitchboardConfig) -> None:
        """Move to `config` changing only what differs (SPEC §12, hot reload).

        An unchanged server keeps its connection, process and state; a removed one stops; an added
        one starts in STARTING; a changed one (any difference in its entry) is stopped and started.
        """
        old = {spec.name: spec for spec in self.config.enabled}
        new = {spec.name: spec for spec in config.enabled}
        kept = {name for name in old.keys() & new.keys() if old[name] == new[name]}
        for name in old.keys() - kept:
            self._scopes.pop(name).cancel()
            self.observers.left(name)
        ordered: dict[str, Downstream] = {}
        for spec in config.enabled:
            if spec.name in kept:
                ordered[spec.name] = self.downstreams[spec.name]
                continue
            downstream = Downstream(spec, self._connector, self._clock)
            previous = self.downstreams.get(spec.name)
            if previous is not None:
                # A restarted server starts with no subscriptions; its clients still hold theirs.
                downstream.subscriptions |= previous.subscriptions
            self._adopt(downstream)
            ordered[spec.name] = downstream
        # The router and the passthrough hold this very mapping: change it in place.
        self.downstreams.clear()
        self.downstreams.update(ordered)
        if config.policies != self.config.policies:
            self._published["tools"] = ()  # each principal's list may differ now: announce it
        self.config = config
        self.router.fallbacks = config.fallbacks
        self.vouching.reconfigured(config)
        self.observers.reconfigured(config)
        for name, downstream in ordered.items():
            if name not in kept:
                self._start(downstream)
        log.info(
            "config applied: %d unchanged, %d started or restarted, %d stopped",
            len(kept),
            len(new.keys() - kept),
            len(old.keys() - new.keys()),
        )
        self._mark_changed()

    async def settled(self, timeout: float) -> None:
        """Wait (at most `timeout`) until every downstream has had its first verdict."""
        with anyio.move_on_after(timeout):
            for downstream in self.downstreams.values():
                await downstream.settled.wait()

    def tools(self, principal: Who | None = None) -> list[types.Tool]:
        """What tools/list shows: sorted by name, so a client's prompt cache holds (SPEC §23)."""
        return self.search.listed(self.router.tools(principal), principal)

    def route(self, name: str, arguments: dict[str, Any] | None, principal: str | Identity = LOCAL) -> Route:
        """The way of one tools/call, from admission to answer; every lane's calls take one.
        `principal` may come as the whole Identity the HTTP face proved (core/identity.py)."""
        who = identity_of(principal)
        name, arguments = self.search.unwrapped(name, arguments)  # call_tool is the call it names
        return self.router.route(RoutedCall(name, arguments, who.principal, identity=who))

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        caller: Caller | None = None,
        principal: str | Identity = LOCAL,
    ) -> types.CallToolResult:
        """Route one call and await its answer. Raises `MCPError` only to pass a downstream's
        JSON-RPC error through."""
        await self._until_started(self.search.unwrapped(name, arguments)[0])  # call_tool: its tool's
        route = self.route(name, arguments, principal)
        answer = await route.run(caller, raw=False)
        # The answer goes back from here: the SDK sends it once this returns.
        route.after_answer(answer)
        if answer.error is not None:
            raise answer.error
        assert isinstance(answer.result, types.CallToolResult)
        return answer.result

    async def _until_started(self, name: str) -> None:
        if self.waits_for_start(name):
            # Sent right after connecting, before its server's first verdict: wait for that verdict
            # (bounded, as tools/list does) rather than refuse a server that is merely starting.
            await self.started()

    def waits_for_start(self, name: str) -> bool:
        """Whether a call to `name` must wait for a first verdict before it is routed."""
        if self.search.searches(name):  # it searches what the first verdicts list, as tools/list waits
            return not self._started.is_set()
        return not self._started.is_set() and any(
            self.downstreams[server].machine.state is State.STARTING
            for server in self.router.servers_for(name)
        )

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """For /readyz: every enabled server has had its first verdict and at least one is routable."""
        waiting = sorted(name for name, d in self.downstreams.items() if not d.settled.is_set())
        routable = sorted(name for name, d in self.downstreams.items() if d.machine.routable)
        return not waiting and bool(routable), {"waiting_for_first_verdict": waiting, "routable": routable}

    def status(self) -> dict[str, Any]:
        status = snapshot(self.downstreams.values(), self.config.fallbacks)
        status["resource_clashes"] = self.passthrough.clashes()
        return status | self.observers.report()

    def _mark_changed(self) -> None:
        self._changed.set()

    async def _publish_changes(self) -> None:
        while True:
            await self._changed.wait()
            self._changed = anyio.Event()
            signatures = self._signatures()
            changed = [kind for kind in LISTS if signatures[kind] != self._published[kind]]
            self._published = signatures
            for kind in changed:
                log.info("%s changed: %d listed", kind, len(signatures[kind]))
                try:
                    if kind == "tools":
                        for subscriber in self._subscribers:
                            await subscriber()
                    for list_subscriber in self._list_subscribers:
                        await list_subscriber(kind)
                except Exception:
                    # News that cannot be delivered must not stop the routing it is about.
                    log.exception("could not announce the changed %s list", kind)

    def _signatures(self) -> dict[str, tuple[str, ...]]:
        passthrough = self.passthrough
        return {
            # The whole definition: a description changed behind a pin (served with "warn") is news too.
            "tools": tuple(tool.model_dump_json(by_alias=True, exclude_none=True) for tool in self.tools()),
            "resources": tuple(r.uri for r in passthrough.resources())
            + tuple(t.uri_template for t in passthrough.templates()),
            "prompts": tuple(prompt.name for prompt in passthrough.prompts()),
        }
