"""Which tools the switchboard lists, and which `Route` each call takes (SPEC §7, Tools and Degradation).

- `server.tool` names a tool of one downstream; it is listed, and routed, only while that server is
  routable (HEALTHY, or PROBATION with its one trial slot free).
- A capability of `fallbacks` is listed once under its own name and goes to the first entry of its
  chain that can take it (route.py walks the chain).
- A name that is neither is answered UNKNOWN_TOOL; `switchboard_status` by the switchboard itself.

A caller with a policy (policy.py: its own, or its IdP groups') is shown only what it may call: its
tools/list, its `switchboard_status` (`status_for`), the tools UNKNOWN_TOOL suggests (a server it may
not call is answered as one that does not exist), and the entries of a fallback chain it is routed
along. Each of them takes the caller as its Identity where one is known, so its groups count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import mcp_types as types

from colibri.switchboard.base import UNKNOWN_TOOL, envelopes
from colibri.switchboard.config import STATUS_TOOL, Target
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.routing.observers import Answer, Observers, Outcome, RoutedCall, Who
from colibri.switchboard.routing.policy import Policies
from colibri.switchboard.routing.route import Own, Route
from colibri.switchboard.routing.status import seen_by
from colibri.switchboard.routing.vouching import Vouching

STATUS = types.Tool(
    name=STATUS_TOOL,
    title="Switchboard status",
    description=(
        "Health of every downstream server behind this switchboard: state (STARTING, HEALTHY, "
        "UNHEALTHY, QUARANTINE, PROBATION), last liveness/readiness/capability checks, failure "
        "counts, cooldown left and recent transitions with their reasons. Call it when a tool is "
        "missing from tools/list or a call returned SERVICE_UNAVAILABLE."
    ),
    input_schema={"type": "object", "properties": {}},
    annotations=types.ToolAnnotations(
        title="Switchboard status",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
)


class Router:
    """Lists the routable tools and makes each call's `Route`; owns no state beyond the downstreams'."""

    def __init__(
        self,
        downstreams: Mapping[str, Downstream],
        fallbacks: Mapping[str, tuple[Target, ...]],
        status: Callable[[], dict[str, Any]],
        observers: Observers | None = None,
    ) -> None:
        self._downstreams = downstreams
        self.fallbacks = fallbacks
        self._status = status
        self._observers = observers or Observers()
        self._policies = Policies.among(self._observers)
        self.vouching: Vouching | None = None  # the board's: who signs what a downstream Colibri is told
        # The board's tool search (SPEC §23): the own answer of a call to find_tools or call_tool.
        self.searching: Callable[[RoutedCall, Own], Own] | None = None

    def tools(self, principal: Who | None = None) -> list[types.Tool]:
        """What tools/list shows `principal` now (None: what any principal may be shown)."""
        hides = self._observers.hides
        listed = [STATUS]
        for downstream in self._downstreams.values():
            if downstream.machine.routable:
                for tool in downstream.tools.values():
                    name = f"{downstream.name}.{tool.name}"
                    if hides(principal, name) is None:
                        listed.append(tool.model_copy(update={"name": name}))
        for capability in self.fallbacks:
            shown = self.capability(capability, principal)
            if shown is not None:
                listed.append(shown)
        return listed

    def capability(self, name: str, principal: Who | None) -> types.Tool | None:
        """`switchboard_status` or a fallback capability as tools/list shows it to `principal`, if it does."""
        if name == STATUS_TOOL:
            return STATUS
        chain = self.fallbacks.get(name)
        first = (
            None
            if chain is None or self._observers.hides(principal, name)
            else self._first_listed(chain, principal)
        )
        if chain is None or first is None:
            return None
        routes = ", ".join(str(target) for target in chain)
        description = f"{first.description or ''} (served by the first healthy of: {routes})".strip()
        return first.model_copy(update={"name": name, "description": description})

    def _first_listed(self, chain: tuple[Target, ...], principal: Who | None) -> types.Tool | None:
        for target in chain:
            downstream = self._downstreams[target.server]
            if (
                downstream.machine.routable
                and target.tool in downstream.tools
                and self._observers.hides(principal, str(target)) is None
            ):
                return downstream.tools[target.tool]
        return None

    def leanable(self, name: str) -> bool:
        """Whether a call to `name` is routed to downstreams (not answered by the switchboard itself)."""
        return name != STATUS_TOOL and self._chain(name) is not None

    def route(self, call: RoutedCall) -> Route:
        """The way of `call` from admission to answer."""
        chain = self._chain(call.name)
        policy = None if self._policies is None else self._policies.of(call.who)
        if policy is not None and chain is not None and len(chain) > 1:
            # Only the entries the token may call are tried (and named when none can serve); with
            # none of them, the admission refuses the call, naming the policy.
            chain = tuple(target for target in chain if policy.admits(str(target))) or chain
        own = self._own if policy is None else partial(self._own, principal=call.who)
        return Route(
            call,
            chain,
            own=own if self.searching is None else self.searching(call, own),
            downstreams=self._downstreams,
            lacks=self._lacks,
            schemas=self._schemas,
            observers=self._observers,
            vouching=self.vouching,
        )

    def _own(
        self, name: str, chain: tuple[Target, ...] | None, principal: Who | None = None
    ) -> Answer | None:
        """The switchboard's own answer: its status, or UNKNOWN_TOOL; None for a call to route."""
        if name == STATUS_TOOL:
            return Answer(Outcome.OK, envelopes.success(self.status_for(principal)))
        unknown = self._unknown(name, chain, principal)
        return None if unknown is None else Answer(Outcome.DENIED, unknown)

    def status_for(self, principal: Who | None) -> dict[str, Any]:
        """What `switchboard_status` and `/status` show `principal`: with a policy, only the servers
        and tools it may call."""
        policies = self._policies
        if policies is None or policies.of(principal) is None:
            return self._status()
        return seen_by(
            self._status(),
            lambda server: policies.shows_server(principal, server["name"], server["tools"]),
            lambda name: policies.hides(principal, name) is None,
        )

    def servers_for(self, name: str) -> list[str]:
        """The downstreams a call to `name` may be routed to."""
        chain = self._chain(name)
        return [] if chain is None else [target.server for target in chain]

    def _schemas(self, chain: tuple[Target, ...]) -> list[dict[str, Any] | None]:
        """The output schemas a client may have been shown for a tool served by `chain`."""
        # A reload may have removed a server while a call to it was on its way.
        listed = [(self._downstreams.get(target.server), target.tool) for target in chain]
        return [d.tools[tool].output_schema for d, tool in listed if d is not None and tool in d.tools]

    def _unknown(
        self, name: str, chain: tuple[Target, ...] | None, principal: Who | None = None
    ) -> types.CallToolResult | None:
        """UNKNOWN_TOOL for a name that is neither a capability nor a tool a known server lists."""
        if chain is not None and name not in self.fallbacks:
            if not self._lacks(chain[0]):
                return None  # a tool it offers: admission decides (TOOL_NOT_ADMITTED names the policy)
            if not self._shows(principal, chain[0].server):
                chain = None  # a server the token may not call is answered as one that does not exist
        if chain is None:
            return envelopes.error(
                UNKNOWN_TOOL,
                f"unknown tool {name!r}; call tools/list for the tools offered now (a server's tools are "
                f"listed as server.tool while it is healthy) or {STATUS_TOOL} to see every server",
                tool=name,
            )
        if name in self.fallbacks:
            return None
        server = chain[0].server
        hides = self._observers.hides
        offered = ", ".join(
            sorted(t for t in self._downstreams[server].tools if hides(principal, f"{server}.{t}") is None)
        )
        return envelopes.error(
            UNKNOWN_TOOL,
            f"unknown tool {name!r}: {server} offers {offered or 'no tool this token may call'}; call "
            "tools/list for the tools offered now",
            tool=name,
        )

    def _shows(self, principal: Who | None, server: str) -> bool:
        policies, downstream = self._policies, self._downstreams.get(server)
        tools = () if downstream is None else downstream.tools
        return policies is None or policies.shows_server(principal, server, tools)

    def _lacks(self, target: Target) -> bool:
        """Whether the tool is filtered out, or the server's last tools/list (if any) lacks it."""
        downstream = self._downstreams[target.server]
        if not downstream.spec.offers(target.tool):
            return True
        return bool(downstream.tools) and target.tool not in downstream.tools

    def _chain(self, name: str) -> tuple[Target, ...] | None:
        if name in self.fallbacks:
            return self.fallbacks[name]
        server, dot, tool = name.partition(".")
        if dot and tool and server in self._downstreams:
            return (Target(server, tool),)
        return None
