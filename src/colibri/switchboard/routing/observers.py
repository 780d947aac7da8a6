"""The seam every routed request passes, whichever lane carries it: what is asked, what it came to,
and the `Observer`s that may refuse it, hold its answer, or see it go.

A routed request (a `tools/call`, a `resources/read`, a `prompts/get`) is a `RoutedCall`. Its
`Route` (route.py; asked.py for the other two) asks each observer, in order, at four moments:

- `admit(call)`: before anything is sent. A `Refusal` stops it (policy, rate limits, a withheld
  tool): the client gets it as a Pattern A error and no downstream is asked. A call refused
  before admission (an unknown or over-long name) is shown to `refused(call)` instead, so that it
  still costs its caller (the rate limit may refuse it in place of the unknown-tool answer).
- `before_send(call, target)`: an entry (`server.tool`, `server:resources/read`, ...) is about to
  be asked. The audit opens its row here, committed before anything leaves: a `Refusal` (the row
  cannot be written) stops the call unsent; an awaitable holds the sending until it is done
  (a database write that must wait goes to a thread, and the lean lane to a task).
- `before_answer(call, answer)`: the answer is decided but not yet sent. An observer that must be
  done before the client hears it (an audit row committed first) returns an awaitable, and the
  answer waits for it: a database write goes to a thread (`anyio.to_thread.run_sync(commit)`), and
  on the lean lane, which otherwise answers from the downstream's callback, a task awaits it and
  then writes the answer. One that returns None costs the answer nothing (a write done at once).
- `after_answer(call, answer)`: the answer is on its way (metrics). Never delays the client.

Around the calls: `hides(who, name)` says why a name is not shown to a caller (policy, a withheld
tool; `who` a principal's name or its Identity, whose IdP groups a policy may name): lists leave it
out and a fallback chain skips it. `joined`, `moved` and `left` follow each downstream's health: it
joined the board (and its first state), changed state, or was removed by a reload; `listed` sees
each downstream's tools when they change (pins). `report` adds to `switchboard_status`,
`reconfigured` sees a reloaded config, and `attach` hands the observer the board's `lists_changed`,
to call when what it hides changes.

Observers are composed once, in the order given (`Observers`): the first refusal wins. A hook an
observer does not override is never called, so the fast path pays only for the hooks in use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from colibri.core.identity import Identity
from colibri.switchboard.config import SwitchboardConfig
from colibri.switchboard.health import State, Transition

LOCAL = "local"  # the principal of a call that came without a token (stdio, HTTP without tokens)

# Who asks: a principal's name, or the Identity an edge proved (its IdP groups too, SPEC §20).
Who = str | Identity


class Outcome(StrEnum):
    """What a routed request came to, as a whole."""

    OK = "ok"  # a downstream answered it
    TOOL_ERROR = "tool_error"  # a downstream answered with its own tool error (isError)
    ERROR = "error"  # a downstream failed it, or answered a JSON-RPC error, or the switchboard did
    TIMEOUT = "timeout"  # sent, and no answer came in time
    UNAVAILABLE = "unavailable"  # nothing routable could take it
    DENIED = "denied"  # refused before routing: unknown, or an observer's refusal
    CANCELLED = "cancelled"  # the client gave it up, or the switchboard stopped; nothing is sent back


# RoutedCall, Tried and Answer are made on every call's path, where a frozen dataclass's __init__
# costs two to three times a plain one's: they are plain, and nothing changes them once made.


@dataclass(slots=True)
class RoutedCall:
    """One request as the switchboard routes it, the same on every lane.

    `name` is what the client named (`server.tool`, a fallback capability, `server.prompt`, a
    resource URI); `method` the MCP method; `principal` who asked (the token's name over HTTP);
    `server` the server a resources/read or prompts/get goes to, once known; `identity` what
    proved the principal (its issuer and token_id go in the audit row, SPEC §20; None: nothing
    did). `record` is the audit's, between its moments.
    """

    name: str
    arguments: dict[str, Any] | None
    principal: str = LOCAL
    method: str = "tools/call"
    server: str | None = None
    identity: Identity | None = None
    record: Any = field(default=None, compare=False, repr=False)

    @property
    def subject(self) -> str:
        """The name policies, rate limits and the audit know it by: the tool as the client named it,
        or `server:resources/read` / `server:prompts/get` (`?` for a server not known)."""
        if self.method == "tools/call":
            return self.name
        return f"{self.server or '?'}:{self.method}"

    @property
    def who(self) -> Who:
        """The caller as policies and limits judge it: its Identity (groups and all) when known."""
        return self.principal if self.identity is None else self.identity


@dataclass(slots=True)
class Tried:
    """One entry of a request's chain: asked (ok, tool_error, error, timeout) or refused by its health."""

    server: str
    target: str  # the tool, prompt or URI on that server
    outcome: str
    seconds: float


@dataclass(slots=True)
class Answer:
    """What a routed request came to: a result, or a JSON-RPC error passed through as itself."""

    outcome: Outcome
    result: types.CallToolResult | dict[str, Any] | types.Result | None = None
    error: MCPError | None = None
    tried: tuple[Tried, ...] = field(default=())
    # Why it was refused where its error's code does not say (an unknown resource or prompt).
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """An observer's no: the Pattern A error code, the message, and details for the client."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


# What `before_send` may say: go (None), stop (a Refusal), or wait for this first.
Sending = Refusal | Awaitable[Refusal | None] | None


class Observer:
    """Does nothing at every moment; an observer overrides the hooks it needs (see the module)."""

    def admit(self, call: RoutedCall) -> Refusal | None:
        return None

    def refused(self, call: RoutedCall) -> Refusal | None:
        return None

    def before_send(self, call: RoutedCall, target: str) -> Sending:
        return None

    def hides(self, principal: Who | None, name: str) -> str | None:
        """Why `name` is not shown to `principal` (None: any principal), or None when it is."""
        return None

    def before_answer(self, call: RoutedCall, answer: Answer) -> Awaitable[None] | None:
        return None

    def after_answer(self, call: RoutedCall, answer: Answer) -> None:
        return None

    def joined(self, server: str, state: State) -> None:
        return None

    def moved(self, server: str, transition: Transition) -> None:
        return None

    def left(self, server: str) -> None:
        return None

    def listed(self, server: str, tools: Mapping[str, types.Tool]) -> None:
        return None

    def report(self) -> dict[str, Any]:
        return {}

    def reconfigured(self, config: SwitchboardConfig) -> None:
        return None

    def attach(self, lists_changed: Callable[[], None]) -> None:
        return None


def _overriding(observers: Sequence[Observer], hook: str) -> tuple[Observer, ...]:
    base = getattr(Observer, hook)
    return tuple(observer for observer in observers if getattr(type(observer), hook) is not base)


class Observers:
    """The observers of one board, in order; each hook called only on those that override it."""

    def __init__(self, observers: Sequence[Observer] = ()) -> None:
        self.all = tuple(observers)
        self._admit = _overriding(observers, "admit")
        self._refused = _overriding(observers, "refused")
        self._send = _overriding(observers, "before_send")
        self._hides = _overriding(observers, "hides")
        self._before = _overriding(observers, "before_answer")
        self._after = _overriding(observers, "after_answer")
        self._joined = _overriding(observers, "joined")
        self._moved = _overriding(observers, "moved")
        self._left = _overriding(observers, "left")
        self._listed = _overriding(observers, "listed")

    def admit(self, call: RoutedCall) -> Refusal | None:
        for observer in self._admit:
            refusal = observer.admit(call)
            if refusal is not None:
                return refusal
        return None

    def refused(self, call: RoutedCall) -> Refusal | None:
        """A call refused before admission, shown to those who count it: their refusal, if any."""
        for observer in self._refused:
            refusal = observer.refused(call)
            if refusal is not None:
                return refusal
        return None

    def before_send(self, call: RoutedCall, target: str) -> Sending:
        """None when the entry may be asked now; a Refusal; or what it must wait for first."""
        pending: list[Awaitable[Refusal | None]] = []
        for observer in self._send:
            said = observer.before_send(call, target)
            if isinstance(said, Refusal):
                return _refused_after(pending, said) if pending else said
            if said is not None:
                pending.append(said)
        return _first_refusal(pending) if pending else None

    def hides(self, principal: Who | None, name: str) -> str | None:
        for observer in self._hides:
            why = observer.hides(principal, name)
            if why is not None:
                return why
        return None

    def before_answer(self, call: RoutedCall, answer: Answer) -> Awaitable[None] | None:
        """None when every observer is done already; else what the answer must wait for."""
        if not self._before:
            return None
        pending = [
            waiting
            for observer in self._before
            if (waiting := observer.before_answer(call, answer)) is not None
        ]
        return _all_of(pending) if pending else None

    def after_answer(self, call: RoutedCall, answer: Answer) -> None:
        for observer in self._after:
            observer.after_answer(call, answer)

    def joined(self, server: str, state: State) -> None:
        for observer in self._joined:
            observer.joined(server, state)

    def moved(self, server: str, transition: Transition) -> None:
        for observer in self._moved:
            observer.moved(server, transition)

    def left(self, server: str) -> None:
        for observer in self._left:
            observer.left(server)

    def listed(self, server: str, tools: Mapping[str, types.Tool]) -> None:
        for observer in self._listed:
            observer.listed(server, tools)

    def report(self) -> dict[str, Any]:
        reported: dict[str, Any] = {}
        for observer in self.all:
            reported |= observer.report()
        return reported

    def reconfigured(self, config: SwitchboardConfig) -> None:
        for observer in self.all:
            observer.reconfigured(config)

    def attach(self, lists_changed: Callable[[], None]) -> None:
        for observer in self.all:
            observer.attach(lists_changed)


async def _first_refusal(pending: list[Awaitable[Refusal | None]]) -> Refusal | None:
    refusal = None
    for waiting in pending:  # each is awaited: an audit row opened is closed by its answer
        said = await waiting
        refusal = refusal or said
    return refusal


async def _refused_after(pending: list[Awaitable[Refusal | None]], refusal: Refusal) -> Refusal:
    await _first_refusal(pending)
    return refusal


async def _all_of(pending: list[Awaitable[None]]) -> None:
    # In order, as the observers come: an audit row committed first, then whatever follows it.
    for waiting in pending:
        await waiting
