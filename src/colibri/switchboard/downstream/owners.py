"""Which call a downstream's message belongs to, and the messages that belong to none (SPEC §21).

Everything a downstream sends in the course of a call (log lines, sampling, elicitation, roots)
goes only to the client request that made that call, never to "the newest call" or "the client
that spoke last". The tie is `CALL`, the owning call's `Caller`, read by the SDK client's callbacks
(callbacks.py) in the context the SDK runs them in:

- a call sent through the SDK client sets it in its own task; the 2026-era driver asks its input
  requests from that task's children, and the SDK's Streamable HTTP transport reads each request's
  own response stream in a copy of the sender's context, which the dispatcher hands on to the
  callbacks of what arrived there: both are tied by construction;
- a stdio (or legacy SSE) connection has one stream for everything, and its messages say nothing of
  the request they serve. One is tied to a call only when that call was the only one in flight on
  the connection when the message was read (`sole`), judged in the order of the wire (lanes.py,
  watched.py): exactly one call, so nothing is guessed. Any other is dropped.

A message tied to no call is dropped, fail closed: a request is refused to the downstream, and each
drop is counted (`DROPS`, shown at /metrics) and logged at most once a minute per server.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

import mcp_types as types

log = logging.getLogger("colibri.switchboard")

# The `Caller` of the call a downstream's message belongs to, where the SDK runs its callbacks.
CALL: ContextVar[Any] = ContextVar("colibri_switchboard_call", default=None)

# Server-to-client messages that belong to a call: they are tied, or dropped.
CALL_BOUND = frozenset(
    {"notifications/message", "sampling/createMessage", "elicitation/create", "roots/list"}
)

T = TypeVar("T")

LOG_EVERY_S = 60.0
JUDGED_LIMIT = 256

# What ties a line judged on the wire to the message the SDK parses from it: a request's method and
# id, a notification's method and params.
Key = tuple[str, Any, Any]


def sole(callers: Sequence[T]) -> T | None:
    """The only call in flight, or None when there are none or several: never a guess."""
    return callers[0] if len(callers) == 1 else None


class WireOwners:
    """The call each call-bound line of a stdio connection belongs to, judged the moment it is read.

    Judged in the pipe's reader (lanes.py), in the order of the wire: a lean answer is taken there
    the moment it is read, before the SDK reads the lines that came before it, so judging when the
    SDK reads them could tie a line to a call begun after it was written.
    """

    def __init__(self, sole: Callable[[], Any] = lambda: None) -> None:
        self._sole = sole
        self._judged: deque[tuple[Key, Any]] = deque(maxlen=JUDGED_LIMIT)

    def read(self, message: dict[str, Any]) -> None:
        """A call-bound line was read: it belongs to the only call in flight now, if there is one."""
        key = ("request", message.get("method"), message["id"]) if "id" in message else None
        key = key or ("notification", message.get("method"), message.get("params"))
        self._judged.append((key, self._sole()))

    def owner_of(self, message: types.JSONRPCRequest | types.JSONRPCNotification) -> Any:
        """The call `message`'s line was judged to belong to (None: none, or never judged). Lines
        judged before it that the SDK never handed on (malformed ones) are forgotten."""
        if isinstance(message, types.JSONRPCRequest):
            key: Key = ("request", message.method, message.id)
        else:
            key = ("notification", message.method, message.params)
        for index, (judged, owner) in enumerate(self._judged):
            if judged == key:
                for _ in range(index + 1):
                    self._judged.popleft()
                return owner
        return None


class Drops:
    """Messages of the downstreams dropped because no call owns them: counted, and logged sparingly."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], int] = {}
        self._logged: dict[str, float] = {}
        self._quiet: dict[str, int] = {}

    def note(self, server: str, kind: str) -> None:
        """Count one dropped message of `kind` from `server`; log it unless that server was logged
        less than a minute ago (the next line says how many were kept quiet)."""
        self.counts[server, kind] = self.counts.get((server, kind), 0) + 1
        now = time.monotonic()
        last = self._logged.get(server)
        if last is not None and now - last < LOG_EVERY_S:
            self._quiet[server] = self._quiet.get(server, 0) + 1
            return
        self._logged[server] = now
        quiet = self._quiet.pop(server, 0)
        more = f" ({quiet} more dropped in the last minute)" if quiet else ""
        log.warning(
            "%s: dropped a %s that belongs to no single call in flight (several clients' calls, "
            "or none)%s; isolate: principal gives each principal its own connection",
            server,
            kind,
            more,
        )


# One tally per process: the drops are the downstreams' own, whichever face serves them.
DROPS = Drops()
