"""The seam every routed request passes, whichever lane carries it: what is asked, what it came to,
and the `Observer`s that may refuse it, hold its answer, or see it go.

A routed request (a `tools/call`, a `resources/read`, a `prompts/get`) is a `RoutedCall`. Its
`Route` (route.py) asks each observer, in order, at three moments:

- `admit(call)`: before anything is sent. A `Refusal` stops it (policy, rate limits): the client
  gets it as a Pattern A error and no downstream is asked.
- `before_answer(call, answer)`: the answer is decided but not yet sent. An observer that must be
  done before the client hears it (an audit row committed first) returns an awaitable, and the
  answer waits for it: a database write goes to a thread (`anyio.to_thread.run_sync(commit)`), and
  on the lean lane, which otherwise answers from the downstream's callback, a task awaits it and
  then writes the answer. One that returns None costs the answer nothing.
- `after_answer(call, answer)`: the answer is on its way (metrics). Never delays the client.

`joined`, `moved` and `left` follow each downstream's health: it joined the board (and its first
state), changed state, or was removed by a reload.

Observers are composed once, in the order given (`Observers`): the first refusal wins. A hook an
observer does not override is never called, so the fast path pays only for the hooks in use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from colibri.switchboard.health import State, Transition

LOCAL = "local"  # the principal of a call that came without a token (stdio, HTTP without tokens)


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
    resource URI); `method` the MCP method; `principal` who asked (the token's name over HTTP).
    """

    name: str
    arguments: dict[str, Any] | None
    principal: str = LOCAL
    method: str = "tools/call"


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


@dataclass(frozen=True, slots=True)
class Refusal:
    """An observer's no: the Pattern A error code, the message, and details for the client."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


class Observer:
    """Does nothing at every moment; an observer overrides the hooks it needs (see the module)."""

    def admit(self, call: RoutedCall) -> Refusal | None:
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


def _overriding(observers: Sequence[Observer], hook: str) -> tuple[Observer, ...]:
    base = getattr(Observer, hook)
    return tuple(observer for observer in observers if getattr(type(observer), hook) is not base)


class Observers:
    """The observers of one board, in order; each hook called only on those that override it."""

    def __init__(self, observers: Sequence[Observer] = ()) -> None:
        self.all = tuple(observers)
        self._admit = _overriding(observers, "admit")
        self._before = _overriding(observers, "before_answer")
        self._after = _overriding(observers, "after_answer")
        self._joined = _overriding(observers, "joined")
        self._moved = _overriding(observers, "moved")
        self._left = _overriding(observers, "left")

    def admit(self, call: RoutedCall) -> Refusal | None:
        for observer in self._admit:
            refusal = observer.admit(call)
            if refusal is not None:
                return refusal
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


async def _all_of(pending: list[Awaitable[None]]) -> None:
    # In order, as the observers come: an audit row committed first, then whatever follows it.
    for waiting in pending:
        await waiting
