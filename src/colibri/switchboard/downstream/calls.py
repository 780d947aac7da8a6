"""The real calls of one downstream: sent, counted, and judged as evidence of its health.

`Downstream` (supervisor.py) inherits these; they are apart only to keep each module small.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import mcp_types as types

from colibri.switchboard.base import (
    Abandon,
    Caller,
    Done,
    DownstreamError,
    DownstreamSession,
    MalformedResult,
    Notified,
    Notify,
    NotSent,
    PeerError,
    Progress,
    ResultT,
    Vouch,
)
from colibri.switchboard.config import ServerSpec
from colibri.switchboard.downstream.isolated import Isolated
from colibri.switchboard.downstream.owners import CALL, sole
from colibri.switchboard.downstream.results import OutputSchemas, without_server_info
from colibri.switchboard.downstream.statement import SENT_META
from colibri.switchboard.health import COLIBRI, Counters, Evidence, HealthMachine, Prober, Signal, Ticket

T = TypeVar("T")

log = logging.getLogger("colibri.switchboard")


class Calling:
    """Calls to a downstream; the state they read and write is the Downstream's."""

    spec: ServerSpec
    name: str
    machine: HealthMachine
    prober: Prober
    counters: Counters
    tools: dict[str, types.Tool]
    session: DownstreamSession | None
    callers: list[Caller]
    isolated: Isolated | None
    notified: Notified | None
    _schemas: OutputSchemas

    async def call(  # noqa: PLR0917 - positional in the order the route hands them
        self,
        ticket: Ticket,
        tool: str,
        arguments: dict[str, Any] | None,
        caller: Caller | None = None,
        principal: str | None = None,
        vouch: Vouch | None = None,
    ) -> types.CallToolResult:
        """Send one routed call; its outcome is evidence about this server's health. An isolated
        server's call goes to `principal`'s own process (isolated.py). A Colibri is told the caller
        (`vouch`, SPEC §20)."""
        if self.isolated is not None:
            return await self.isolated.call(
                principal,
                self.machine,
                ticket,
                lambda own, t: own.call(t, tool, arguments, caller, None, vouch),
            )

        def send(session: DownstreamSession, progress: Progress | None) -> Awaitable[types.CallToolResult]:
            return session.call_tool(tool, arguments, self.spec.timeout_for(tool), progress)

        return await self._counted(ticket, tool, caller, send, vouch)

    async def call_raw(  # noqa: PLR0917 - positional in the order the route hands them
        self,
        ticket: Ticket,
        tool: str,
        arguments: dict[str, Any] | None,
        caller: Caller | None = None,
        principal: str | None = None,
        vouch: Vouch | None = None,
    ) -> dict[str, Any]:
        """`call`, answered as the raw JSON result (the lean lane, see lanes.py)."""
        if self.isolated is not None:
            return await self.isolated.call(
                principal,
                self.machine,
                ticket,
                lambda own, t: own.call_raw(t, tool, arguments, caller, None, vouch),
            )

        def send(session: DownstreamSession, progress: Progress | None) -> Awaitable[dict[str, Any]]:
            return session.call_raw(tool, arguments, self.spec.timeout_for(tool), progress)

        return await self._counted(ticket, tool, caller, send, vouch)

    def send_raw(
        self,
        ticket: Ticket,
        tool: str,
        arguments: dict[str, Any] | None,
        caller: Caller,
        *,
        progress: Notify,
        done: Done,
        vouch: Vouch | None = None,
    ) -> Abandon | None:
        """`call_raw` without a task: `done` gets the checked result or the error, from a callback.

        None when this connection cannot (no lean lane, or the tool was never listed, so its output
        schema is unknown): nothing was sent and `ticket` is still held. The call given up by the
        returned `Abandon` releases its ticket and is no evidence either way.
        """
        session = self.session
        listed = self.tools.get(tool)
        if session is None or listed is None or self.isolated is not None:
            return None  # an isolated server's call awaits its principal's own process

        def answered(outcome: dict[str, Any] | DownstreamError) -> None:
            if isinstance(outcome, NotSent):
                # Refused before anything left (the HTTP lane's connection): no evidence either
                # way, as on the awaited path; the route may send it elsewhere.
                self.callers.remove(caller)
                self.machine.release(ticket)
                done(outcome)
                return
            if isinstance(outcome, dict):
                try:
                    self._schemas.check(tool, listed.output_schema, outcome)
                    outcome = without_server_info(outcome)
                except MalformedResult as exc:
                    outcome = exc
            blamed = outcome if isinstance(outcome, DownstreamError) else None
            if isinstance(blamed, PeerError) and not blamed.blames_server:
                blamed = None  # the request was wrong, not the server
            if blamed is not None:
                # Judged before the call goes on: a next entry on this server sees the verdict.
                self.callers.remove(caller)
                self._call_outcome(ticket, tool, blamed)
                done(outcome)
                return
            try:
                done(outcome)  # the answer first: what follows is bookkeeping nobody waits for
            finally:
                self.callers.remove(caller)
                self._call_outcome(ticket, tool, None)

        self.callers.append(caller)
        owned = CALL.set(caller)  # a 2026-era server's input requests go to this call's client
        told = SENT_META.set(None)
        try:
            SENT_META.set(self._told(session, vouch))  # reset with `told` below, whatever it was set to
            abandon = session.send_raw(tool, arguments, self.spec.timeout_for(tool), progress, answered)
        except NotSent:
            self.callers.remove(caller)
            self.machine.release(ticket)
            self.counters.calls += 1
            raise
        finally:
            SENT_META.reset(told)
            CALL.reset(owned)
        if abandon is None:
            self.callers.remove(caller)
            return None
        self.counters.calls += 1

        def given_up(reason: str) -> None:
            abandon(reason)
            self.callers.remove(caller)
            self.machine.release(ticket)

        return given_up

    async def _counted(
        self,
        ticket: Ticket,
        tool: str,
        caller: Caller | None,
        send: Callable[[DownstreamSession, Progress | None], Awaitable[T]],
        vouch: Vouch | None = None,
    ) -> T:
        session = self.session
        reported = False
        if caller is not None:
            self.callers.append(caller)
        # What the downstream sends in the course of this call goes to `caller` and nobody else:
        # the SDK runs the callbacks of what is tied to this request in this context (owners.py).
        owned = CALL.set(caller)
        told = SENT_META.set(None)
        try:
            SENT_META.set(self._told(session, vouch))  # reset with `told` below, whatever it was set to
            if session is None:
                raise NotSent("not connected")
            self.counters.calls += 1
            try:
                result = await send(session, None if caller is None else caller.progress)
            except NotSent:
                raise
            except PeerError as exc:
                reported = True
                self._call_outcome(ticket, tool, exc if exc.blames_server else None)
                raise
            except DownstreamError as exc:
                reported = True
                self._call_outcome(ticket, tool, exc)
                raise
            reported = True
            self._call_outcome(ticket, tool, None)
            return result
        finally:
            SENT_META.reset(told)
            CALL.reset(owned)
            if caller is not None:
                self.callers.remove(caller)
            if not reported:
                self.machine.release(ticket)

    @staticmethod
    def _told(session: DownstreamSession | None, vouch: Vouch | None) -> dict[str, Any] | None:
        """The statement of the call's caller, signed only for a Colibri (its serverInfo.name): a
        third-party server never learns who the caller is (SPEC §20)."""
        if vouch is None or session is None or session.server_name != COLIBRI:
            return None
        return vouch()

    async def request(self, request: types.ClientRequest, result_type: type[ResultT]) -> ResultT:
        """Any request but a tool call (resources, prompts, completion); not counted as health evidence."""
        session = self.session
        if session is None:
            raise NotSent("not connected")
        return await session.request(request, result_type, self.spec.health.call_timeout_s)

    def _sole(self) -> Caller | None:
        """The only call in flight here, if exactly one is: a message naming no request may be its."""
        return sole(self.callers)

    async def _notified(self, notification: types.ServerNotification) -> None:
        # Not bound to a call (a resource update): the owner hands it to whoever subscribed.
        if self.notified is not None:
            await self.notified(self.name, notification)

    def _call_outcome(self, ticket: Ticket, tool: str, error: DownstreamError | None) -> None:
        log.debug("%s: call %s: %s", self.name, tool, "ok" if error is None else error.message)
        if error is None:
            self.machine.report(ticket, Evidence(Signal.PASS, detail=f"call {tool}"))
            return
        self.counters.call_failures += 1
        log.info("%s: call %s failed: %s", self.name, tool, error.message)
        self.machine.report(ticket, Evidence(Signal.FAIL, error.kind, f"call {tool}: {error.message}"))
        self.prober.want_capability()
