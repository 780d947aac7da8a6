"""Stage 1 — tool-lock: admission by mode and by the caller\'s scope, then one call at a time, in a
worker thread; write calls that wait together share one transaction (chain/group.py).

A quick write tool (`Tool.quick`) alone with the write lock free runs on the event loop instead:
its only wait would be for that lock, and the store refuses to wait (`Database.without_waiting`),
so the call either runs at once or, before anything is written, goes to the worker to wait there.

The system tools (`server_ping`, `server_health`) read only the server's state in memory: they
are answered at once on the event loop, without the lock, so a long call or a database held by
another process never delays them (SPEC §8). Every other admitted call takes the lock and runs
the rest of the chain in a worker thread (chain/worker.py).
"""

from __future__ import annotations

from functools import partial

from colibri.chain.errors import ToolNotAdmitted, UnknownTool
from colibri.chain.group import BatchFailed
from colibri.chain.types import Call, ChainDeps, Envelope, Next
from colibri.chain.worker import drive
from colibri.core import ids, reasons
from colibri.core.modes import ToolClass, writes_allowed
from colibri.core.shown import quoted, shown, too_long


class ToolLock:
    def __init__(self, deps: ChainDeps) -> None:
        self._tools = deps.tools
        self._state = deps.state
        self._audit = deps.audit
        self._group = deps.group

    async def __call__(self, call: Call, call_next: Next) -> Envelope:
        tool = self._tools.get(call.tool_name)
        if tool is None:
            raise _unknown(call.tool_name)
        mode = self._state.mode
        if not tool.admitted_in(mode):
            refusal = self._refusal(tool.name)
            await self._record_denied(call, reasons.unavailable("mode"), refusal)
            raise ToolNotAdmitted(refusal, tool=tool.name, mode=mode.value)
        call.writes = tool.writes_for(call.raw_arguments)
        if call.writes and not tool.writes and not writes_allowed(mode):
            refusal = (
                f"{tool.name} with {tool.writes_when}=true cannot run: it writes, and mode {mode.value} "
                f"admits no writes; call it without {tool.writes_when} to only read"
            )
            await self._record_denied(call, reasons.unavailable("mode"), refusal)
            raise ToolNotAdmitted(refusal, tool=tool.name, mode=mode.value)
        if not call.caller.admits(tool) or (call.writes and call.caller.scope == "read"):
            what = tool.name if tool.writes else f"{tool.name} with {tool.writes_when}=true"
            refusal = (
                f"{what} cannot run: it writes, and the token {call.caller.principal!r} has scope "
                f"{call.caller.scope!r}, which runs only the read tools; use a token with scope 'write'"
            )
            await self._record_denied(call, reasons.SCOPE, refusal)
            raise ToolNotAdmitted(refusal, tool=tool.name, mode=mode.value, scope=call.caller.scope)
        call.tool = tool
        if tool.tool_class is ToolClass.SYSTEM:
            call.inline = True
            return await call_next(call)
        audit = self._audit

        def work() -> Envelope:
            # Rows of calls answered inline are written first, under the same lock. A batch run
            # again (group.py) logs the call again: only the last run's receipt may be shown.
            call.receipt = None
            return drive(audit.flush_later, call_next(call))

        try:
            result: Envelope = await self._group.run(work, writes=call.writes, quick=tool.quick)
        except BatchFailed as failed:
            call.receipt = None  # its entry was rolled back with the rest
            raise failed.refusal(call.tool_name) from None
        return result

    def _refusal(self, name: str) -> str:
        state = self._state
        admitted = ", ".join(name for name, tool in self._tools.items() if tool.admitted_in(state.mode))
        if state.phase == "phase1" and state.boot_error is None:
            why = "the server is still booting"
        elif state.boot_error is not None:
            why = f"the server fell back to MINIMAL because boot failed ({state.boot_error})"
        else:
            why = f"it is not admitted in mode {state.mode.value}"
        return f"{name} cannot run: {why}; admitted now: {admitted}"

    async def _record_denied(self, call: Call, reason: str, message: str) -> None:
        """The refusal's row and log entry are committed before the refusal is answered (SPEC §14):
        a client that saw it can count on the record, even if the server is killed right after, and
        the answer carries the entry's receipt (SPEC §22). The row says why (SPEC §21: `scope`, or
        `unavailable:mode` when the mode does not admit it)."""
        audit = self._audit
        row = audit.denied_row(
            ids.correlation_id(),
            call.tool_name,
            call.caller,
            call.trace_id,
            reason=reason,
            message=reasons.message(message),
        )
        if row is None:
            return
        try:
            call.receipt = await self._group.run(partial(audit.write_row, row), writes=True)
        except BatchFailed:
            audit.later(row)  # the row waits for the next attempt; the refusal stands, with no receipt


def _unknown(name: str) -> UnknownTool:
    """UNKNOWN_TOOL naming the client's name escaped, and past 256 characters by its length and
    digest (SPEC §21): a megabyte-long name is not sent back, twice, in the answer."""
    return UnknownTool(
        f"unknown tool {quoted(name)}; call tools/list for the tools this server offers",
        tool=shown(name) if too_long(name) else name,
    )
