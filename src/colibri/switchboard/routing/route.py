"""One routed tools/call from admission to answer: the one way every call travels, on every lane.

A `Route` never waits: it says what to do next and what each outcome means. `run()` drives it by
awaiting each attempt (the SDK's lane, and the lean lane wherever something must wait); the lean
lane (faces/lean.py) drives the same methods from the pipe's callbacks, with no task in between.
Either way the rules are here once:

    start()          the switchboard's own answer (switchboard_status, UNKNOWN_TOOL), else the
                     observers' admission (policy, rate limits, pins), else the first entry that
                     admits it (healthy, not hidden from the caller) and that the observers clear
                     to send (the audit's row opened first): an `Attempt`, or a `Clearing` one to
                     `clear()` by awaiting
    answered()       an entry answered: its result goes back unchanged
    failed()         an entry failed: the next entry only when the call never arrived or may be
                     repeated (idempotent), else UPSTREAM_TIMEOUT / UPSTREAM_ERROR; a downstream's
                     JSON-RPC error passes through as itself
    crashed()        the switchboard itself failed: HANDLER_ERROR, never a crash of the lane
    before_answer()  what the answer must wait for (observers that must finish first, e.g. audit)
    after_answer()   the answer is on its way: the observers see it (metrics)
    cancelled()      the client gave the call up: the observers see what was tried

Nothing routable → SERVICE_UNAVAILABLE at once, naming the tool and every reason.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from colibri.core.shown import shown, too_long
from colibri.switchboard.base import (
    HANDLER_ERROR,
    ROUTED_CALLER,
    Caller,
    CallTimedOut,
    DownstreamError,
    PeerError,
    envelopes,
    refusal_reason,
)
from colibri.switchboard.config import Target
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.health import Ticket
from colibri.switchboard.routing.failures import reason, too_long_name, unavailable, upstream_error
from colibri.switchboard.routing.observers import Answer, Observers, Outcome, Refusal, RoutedCall, Tried
from colibri.switchboard.routing.vouching import Vouching

log = logging.getLogger("colibri.switchboard")

Result = types.CallToolResult | dict[str, Any]
Schemas = Callable[[tuple[Target, ...]], list[dict[str, Any] | None]]
# The switchboard's own answer to a call named so, with the chain found for it (None: none), if any.
Own = Callable[[str, tuple[Target, ...] | None], Answer | None]


@dataclass(slots=True)
class Attempt:
    """An entry of a call's chain that admitted it: the call is to be sent there now."""

    target: Target
    downstream: Downstream
    ticket: Ticket
    started: float


@dataclass(slots=True)
class Clearing:
    """An attempt the observers have not cleared yet: send it once `waiting` says None."""

    attempt: Attempt
    waiting: Awaitable[Refusal | None]


Step = Attempt | Clearing | Answer


class Route:
    """One call's way from admission to answer (see the module's docstring)."""

    def __init__(
        self,
        call: RoutedCall,
        chain: tuple[Target, ...] | None,
        *,
        own: Own,
        downstreams: Mapping[str, Downstream],
        lacks: Callable[[Target], bool],
        schemas: Schemas,
        observers: Observers,
        vouching: Vouching | None = None,
    ) -> None:
        self.call = call
        self.statements = None if vouching is None else vouching.statements(call)  # SPEC §20
        self._found = chain
        self._chain = chain or ()
        self._own = own
        self._downstreams = downstreams
        self._lacks = lacks
        self._schemas = schemas
        self._observers = observers
        self._next = 0
        self._reasons: list[dict[str, str]] = []
        self._tried: list[Tried] = []
        self._seen = False  # whether the observers have seen the end (after_answer or cancelled)

    # --- deciding ----------------------------------------------------------------------------------

    def start(self) -> Step:
        name = self.call.name
        if too_long(name):  # no tool has such a name: refused before anything looks it up
            return self._refused(self._observers.refused(self.call) or too_long_name(name), Outcome.DENIED)
        own = self._own(name, self._found)
        if own is not None:
            if own.outcome is Outcome.DENIED and (limited := self._observers.refused(self.call)):
                return self._refused(limited, Outcome.DENIED)
            return own
        refusal = self._observers.admit(self.call)
        if refusal is not None:
            return self._refused(refusal, Outcome.DENIED)
        return self._entry()

    async def clear(self, held: Clearing) -> Attempt | Answer:
        """Wait until the observers clear a held attempt: it is sent, or the call stops unsent."""
        try:
            refusal = await held.waiting
        except BaseException:
            held.attempt.downstream.machine.release(held.attempt.ticket)
            raise
        return held.attempt if refusal is None else self._stopped(held.attempt, refusal)

    def answered(self, attempt: Attempt, result: Result) -> Answer:
        """The entry answered; its result goes back unchanged."""
        failed = result.get("isError") is True if isinstance(result, dict) else result.is_error
        self._tried_at(attempt, "tool_error" if failed else "ok")
        return Answer(Outcome.TOOL_ERROR if failed else Outcome.OK, result, tried=tuple(self._tried))

    def failed(self, attempt: Attempt, exc: DownstreamError) -> Step:
        """The entry failed: on to the next, or the answer for the client."""
        if isinstance(exc, PeerError):
            self._tried_at(attempt, "error")
            error = MCPError(exc.code, exc.rpc_message, exc.data)
            return Answer(Outcome.ERROR, error=error, tried=tuple(self._tried))
        target = attempt.target
        timed_out = isinstance(exc, CallTimedOut)
        self._tried_at(attempt, "timeout" if timed_out else "error")
        rest = self._chain[self._next :]
        if exc.sent and not (rest and target.tool in attempt.downstream.spec.idempotent):
            envelope = upstream_error(self.call.name, target, exc, rest, self._schemas(self._chain))
            return Answer(Outcome.TIMEOUT if timed_out else Outcome.ERROR, envelope, tried=tuple(self._tried))
        # It never reached the server, or repeating it is harmless: on to the next entry.
        done = "retried, it is idempotent" if exc.sent else "it never reached the server"
        self._reasons.append(reason(target, f"{target} failed ({exc.message}); {done}", "failed"))
        return self._entry()

    def crashed(self, exc: Exception) -> Answer:
        """The switchboard failed routing the call (the caller logged it): HANDLER_ERROR, as an answer
        like any other, never a crash of the lane."""
        # An observer that failed may say the call can be retried (nothing was sent: the audit's).
        retry = {"retryable": True} if getattr(exc, "retryable", False) else {}
        envelope = envelopes.error(
            HANDLER_ERROR,
            f"the switchboard failed: {exc}",
            schemas=self._schemas(self._chain),
            tool=self.call.name,
            **retry,
        )
        return Answer(Outcome.ERROR, envelope, tried=tuple(self._tried))

    # --- the observers' moments ------------------------------------------------------------------

    def before_answer(self, answer: Answer) -> Awaitable[None] | None:
        """None when the answer may go now; else what it must wait for."""
        return self._observers.before_answer(self.call, answer)

    def after_answer(self, answer: Answer) -> None:
        if self._seen:
            return
        self._seen = True
        try:
            self._observers.after_answer(self.call, answer)
        except Exception:
            # The answer is gone already: a failing observer must not make a second one.
            log.exception("an observer failed after the answer to %s", self.call.name)

    def cancelled(self) -> None:
        """The call was given up before its answer went; the observers see what was tried."""
        self.after_answer(Answer(Outcome.CANCELLED, tried=tuple(self._tried)))

    # --- driving it by awaiting ------------------------------------------------------------------

    async def run(self, caller: Caller | None, *, raw: bool, step: Step | None = None) -> Answer:
        """Send to each entry in turn, awaiting its answer; returns once the answer may go.

        With `raw`, a downstream's result comes back as its JSON object, untouched (the lean lane).
        """
        ROUTED_CALLER.set(caller)  # an observer holding the call tells and asks this client (SPEC §22)
        try:
            answer = await self._awaited(caller, raw, step)
            try:
                waiting = self.before_answer(answer)
                if waiting is not None:
                    await waiting
            except Exception as exc:
                log.exception("an observer failed before the answer to %s", self.call.name)
                answer = self.crashed(exc)
        except anyio.get_cancelled_exc_class():
            self.cancelled()
            raise
        return answer

    async def _awaited(self, caller: Caller | None, raw: bool, step: Step | None) -> Answer:
        try:
            if step is None:
                step = self.start()
            while not isinstance(step, Answer):
                if isinstance(step, Clearing):
                    step = await self.clear(step)
                    continue
                attempt = step
                downstream, ticket, tool = attempt.downstream, attempt.ticket, attempt.target.tool
                arguments = self.call.arguments
                try:
                    result: Result
                    # An isolated server's process is the principal's; a Colibri is told who it is.
                    principal, vouch = self.call.principal, self.statements
                    if raw:
                        result = await downstream.call_raw(ticket, tool, arguments, caller, principal, vouch)
                    else:
                        result = await downstream.call(ticket, tool, arguments, caller, principal, vouch)
                except DownstreamError as exc:
                    step = self.failed(attempt, exc)
                else:
                    step = self.answered(attempt, result)
        except MCPError as exc:
            return Answer(Outcome.ERROR, error=exc, tried=tuple(self._tried))
        except Exception as exc:
            log.exception("switchboard failed routing %s", self.call.name)
            return self.crashed(exc)
        return step

    # --- the chain -------------------------------------------------------------------------------

    def _entry(self) -> Step:
        """The next entry that admits the call, or SERVICE_UNAVAILABLE with every reason."""
        while self._next < len(self._chain):
            target = self._chain[self._next]
            self._next += 1
            downstream = self._downstreams.get(target.server)
            if downstream is None:  # removed by a reload since the call began
                self._reasons.append(reason(target, f"{target.server} is no longer in the config", "removed"))
                continue
            if self._lacks(target):
                self._reasons.append(
                    reason(target, f"{target.server} does not offer a tool named {target.tool!r}", "no_tool")
                )
                continue
            hidden = self._observers.hides(self.call.who, str(target))
            if hidden is not None:
                self._reasons.append(reason(target, hidden, "hidden"))
                continue
            ticket = downstream.machine.admit()
            if ticket is None:
                machine = downstream.machine
                self._reasons.append(reason(target, machine.why_not(), machine.state.value.lower()))
                self._tried.append(Tried(target.server, target.tool, "refused", 0.0))
                continue
            attempt = Attempt(target, downstream, ticket, time.perf_counter())
            said = self._observers.before_send(self.call, str(target))
            if said is None:
                return attempt
            if isinstance(said, Refusal):
                return self._stopped(attempt, said)
            return Clearing(attempt, said)
        envelope = unavailable(self.call.name, self._reasons, self._schemas(self._chain))
        return Answer(Outcome.UNAVAILABLE, envelope, tried=tuple(self._tried))

    def _refused(self, refusal: Refusal, outcome: Outcome) -> Answer:
        name = self.call.name
        details = {"tool": shown(name) if too_long(name) else name} | refusal.details
        schemas = self._schemas(self._chain)
        envelope = envelopes.error(refusal.code, refusal.message, schemas=schemas, **details)
        return Answer(outcome, envelope, tried=tuple(self._tried))

    def _stopped(self, attempt: Attempt, refusal: Refusal) -> Answer:
        """An observer would not let the attempt go (the entry's rate limit: denied; no audit row: an
        error): nothing is sent, the ticket goes back, and the call ends with the refusal."""
        attempt.downstream.machine.release(attempt.ticket)
        denied = refusal_reason(refusal.code, refusal.details) is not None
        return self._refused(refusal, Outcome.DENIED if denied else Outcome.ERROR)

    def _tried_at(self, attempt: Attempt, outcome: str) -> None:
        target = attempt.target
        self._tried.append(Tried(target.server, target.tool, outcome, time.perf_counter() - attempt.started))
