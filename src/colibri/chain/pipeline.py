"""The chain: the five stages in the one order SPEC §1.5 fixes, composed once at start-up."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import anyio

from colibri.chain import envelope
from colibri.chain.audit_enter import AuditEnter
from colibri.chain.audit_exit import AuditExit
from colibri.chain.dispatch import Dispatch
from colibri.chain.errors import ChainError
from colibri.chain.tool_lock import ToolLock
from colibri.chain.types import Call, ChainDeps, Envelope, Next, Stage
from colibri.chain.validate import SchemaValidate
from colibri.core.callers import LOCAL, Caller
from colibri.core.envelope_text import to_json
from colibri.core.spec import Tool
from colibri.core.state import ServerState
from colibri.storage.audit_log import AuditLog

STAGES: tuple[type[Stage], ...] = (ToolLock, SchemaValidate, AuditEnter, Dispatch, AuditExit)


@dataclass(frozen=True, slots=True)
class Reply:
    envelope: Envelope
    text: str

    @property
    def is_error(self) -> bool:
        return envelope.is_error(self.envelope)


class Chain:
    """Runs one tool call through every stage; a chain error becomes its envelope here."""

    def __init__(self, tools: Mapping[str, Tool], state: ServerState) -> None:
        deps = ChainDeps(tools=tools, state=state, audit=AuditLog(state), lock=anyio.Lock(fast_acquire=True))
        self.lock = deps.lock
        self._entry = _compose([stage(deps) for stage in STAGES])

    async def run(self, tool_name: str, raw_arguments: object, caller: Caller = LOCAL) -> Reply:
        call = Call(tool_name=tool_name, raw_arguments=raw_arguments, caller=caller)
        try:
            result = await self._entry(call)
        except ChainError as exc:
            result = envelope.chain_error(exc)
        return Reply(result, call.text or to_json(result))


async def _end(call: Call) -> Envelope:
    assert call.envelope is not None
    return call.envelope


def _compose(stages: list[Stage]) -> Next:
    call_next: Next = _end
    for stage in reversed(stages):
        call_next = _bind(stage, call_next)
    return call_next


def _bind(stage: Stage, call_next: Next) -> Next:
    async def run(call: Call) -> Envelope:
        return await stage(call, call_next)

    return run
