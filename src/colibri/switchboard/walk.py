"""One routed call's way along its chain: which entry next, and what each outcome means.

`Walk` never waits: `Router.follow` drives it with awaits, the lean lane (lean.py) from the pipe's
callbacks, so the rules of routing — admission, the next entry only when the call never arrived or
may be repeated, SERVICE_UNAVAILABLE with every reason, JSON-RPC errors passed through — are here once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from colibri.switchboard import envelopes
from colibri.switchboard.config import STATUS_TOOL, Target
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.errors import (
    SERVICE_UNAVAILABLE,
    UPSTREAM_ERROR,
    UPSTREAM_TIMEOUT,
    CallTimedOut,
    DownstreamError,
    PeerError,
)
from colibri.switchboard.states import Ticket

Record = Callable[[str, str, str, float], None]


@dataclass(slots=True)
class Attempt:
    """An entry of a call's chain that admitted it: the call is to be sent there now."""

    target: Target
    downstream: Downstream
    ticket: Ticket
    started: float


class Walk:
    """One call's way along its chain (see the module's docstring)."""

    def __init__(
        self,
        name: str,
        chain: tuple[Target, ...],
        *,
        downstreams: Mapping[str, Downstream],
        lacks: Callable[[Target], bool],
        record: Record,
        schemas: Callable[[tuple[Target, ...]], list[dict[str, Any] | None]],
    ) -> None:
        self._name = name
        self._chain = chain
        self._downstreams = downstreams
        self._lacks = lacks
        self._record = record
        self._schemas = schemas
        self._next = 0
        self._reasons: list[dict[str, str]] = []

    def next(self) -> Attempt | types.CallToolResult:
        """The next entry that admits the call, or SERVICE_UNAVAILABLE with every reason."""
        while self._next < len(self._chain):
            target = self._chain[self._next]
            self._next += 1
            downstream = self._downstreams.get(target.server)
            if downstream is None:  # removed by a reload since the call began
                self._reasons.append(_reason(target, f"{target.server} is no longer in the config"))
                continue
            if self._lacks(target):
                self._reasons.append(
                    _reason(target, f"{target.server} does not offer a tool named {target.tool!r}")
                )
                continue
            ticket = downstream.machine.admit()
            if ticket is None:
                self._reasons.append(_reason(target, downstream.machine.why_not()))
                self._record(target.server, target.tool, "refused", 0.0)
                continue
            return Attempt(target, downstream, ticket, time.perf_counter())
        return envelopes.error(
            SERVICE_UNAVAILABLE,
            f"{self._name} is unavailable: {'; '.join(reason['reason'] for reason in self._reasons)}. "
            f"Try again later or call {STATUS_TOOL} for details",
            schemas=self._schemas(self._chain),
            tool=self._name,
            reasons=self._reasons,
        )

    def answered(self, attempt: Attempt, result: types.CallToolResult | dict[str, Any]) -> None:
        """The entry answered (its result goes back unchanged)."""
        failed = result.get("isError") is True if isinstance(result, dict) else result.is_error
        self._done(attempt, "tool_error" if failed else "ok")

    def failed(self, attempt: Attempt, exc: DownstreamError) -> Attempt | types.CallToolResult:
        """The entry failed: on to the next, or the error for the client.

        Raises `MCPError` for a downstream's JSON-RPC error, which is passed through unchanged.
        """
        if isinstance(exc, PeerError):
            self._done(attempt, "error")
            raise MCPError(exc.code, exc.rpc_message, exc.data) from None
        target = attempt.target
        self._done(attempt, "timeout" if isinstance(exc, CallTimedOut) else "error")
        rest = self._chain[self._next :]
        if exc.sent and not (rest and target.tool in attempt.downstream.spec.idempotent):
            return _upstream_error(self._name, target, exc, rest, self._schemas(self._chain))
        # It never reached the server, or repeating it is harmless: on to the next entry.
        done = "retried, it is idempotent" if exc.sent else "it never reached the server"
        self._reasons.append(_reason(target, f"{target} failed ({exc.message}); {done}"))
        return self.next()

    def _done(self, attempt: Attempt, outcome: str) -> None:
        target = attempt.target
        self._record(target.server, target.tool, outcome, time.perf_counter() - attempt.started)


def _upstream_error(
    name: str,
    target: Target,
    exc: DownstreamError,
    rest: tuple[Target, ...],
    schemas: list[dict[str, Any] | None],
) -> types.CallToolResult:
    timed_out = isinstance(exc, CallTimedOut)
    what = "did not answer in time" if timed_out else "failed after the request was sent"
    message = f"{target} {what} ({exc.message}); it may have acted"
    if rest:
        message += (
            f", so the call was not repeated on {', '.join(str(t) for t in rest)}: "
            f"{target.tool!r} is not marked idempotent for {target.server} in the config"
        )
    return envelopes.error(
        UPSTREAM_TIMEOUT if timed_out else UPSTREAM_ERROR,
        message,
        schemas=schemas,
        tool=name,
        server=target.server,
        repeated=False,
        failure=exc.kind,
    )


def _reason(target: Target, reason: str) -> dict[str, str]:
    return {"target": str(target), "reason": reason}
