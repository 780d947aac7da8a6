"""The chain: the five stages in the one order SPEC §1.5 fixes, composed once at start-up."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from functools import partial

import anyio

from colibri.chain import envelope
from colibri.chain.audit_enter import AuditEnter
from colibri.chain.audit_exit import AuditExit
from colibri.chain.dispatch import Dispatch
from colibri.chain.errors import ChainError
from colibri.chain.group import BatchFailed, GroupCommit
from colibri.chain.tool_lock import ToolLock
from colibri.chain.types import Call, ChainDeps, Envelope, Next, Stage
from colibri.chain.validate import SchemaValidate
from colibri.core.callers import LOCAL, Caller
from colibri.core.envelope_text import to_json
from colibri.core.spec import Tool
from colibri.core.state import ServerState
from colibri.core.traces import current_trace_id
from colibri.domains.log.api import ActionLog, Receipt
from colibri.storage.audit_log import AuditLog

STAGES: tuple[type[Stage], ...] = (ToolLock, SchemaValidate, AuditEnter, Dispatch, AuditExit)
RETRY_LATER_S = 1.0


@dataclass(frozen=True, slots=True)
class Reply:
    envelope: Envelope
    text: str
    receipt: Receipt | None = None  # the log entry recorded for the call, committed (SPEC §22)

    @property
    def is_error(self) -> bool:
        return envelope.is_error(self.envelope)


class Chain:
    """Runs one tool call through every stage; a chain error becomes its envelope here."""

    def __init__(self, tools: Mapping[str, Tool], state: ServerState, origin: str | None = None) -> None:
        # `origin`: the log's, as its checkpoints name it (COLIBRI_LOG_ORIGIN; None: the default)
        audit, lock = AuditLog(state, ActionLog(origin)), anyio.Lock(fast_acquire=True)
        group = GroupCommit(state, audit, lock)
        deps = ChainDeps(tools=tools, state=state, audit=audit, lock=lock, group=group)
        self.lock = deps.lock
        self._group = group
        self._audit = deps.audit
        self._entry = _compose([stage(deps) for stage in STAGES])
        self._wake: anyio.Event | None = None

    async def run(self, tool_name: str, raw_arguments: object, caller: Caller = LOCAL) -> Reply:
        call = Call(
            tool_name=tool_name, raw_arguments=raw_arguments, caller=caller, trace_id=current_trace_id()
        )
        try:
            result = await self._entry(call)
            text = call.text or to_json(result)
        except ChainError as exc:
            result = envelope.chain_error(exc)
            text = to_json(result)
        if self._wake is not None and self._audit.pending():
            self._wake.set()
        receipt = call.receipt
        return Reply(result, text, receipt if isinstance(receipt, Receipt) else None)

    async def write_later_rows(self) -> None:
        """For the life of the server: write the audit rows of calls answered inline, soon after
        them, under the lock and off the event loop."""
        while True:
            if not self._audit.pending():
                self._wake = anyio.Event()
                await self._wake.wait()
            with suppress(BatchFailed):  # the rows wait for the next attempt
                await self._group.run(self._audit.flush_later, writes=True)
            if self._audit.pending():  # the database was busy, or more came meanwhile: a little later
                await anyio.sleep(RETRY_LATER_S)

    def close(self) -> None:
        """Write what is left; the caller holds the lock or knows no call runs any more."""
        self._audit.flush_later()


async def _end(call: Call) -> Envelope:
    assert call.envelope is not None
    return call.envelope


def _compose(stages: list[Stage]) -> Next:
    call_next: Next = _end
    for stage in reversed(stages):
        call_next = _bind(stage, call_next)
    return call_next


def _bind(stage: Stage, call_next: Next) -> Next:
    # A partial, not a wrapping coroutine: calling it returns the stage's own coroutine, so a call
    # creates and steps through one coroutine per stage instead of two (the order is the same).
    return partial(stage, call_next=call_next)
