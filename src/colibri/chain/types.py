"""Types every stage shares, so stages never import each other."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from colibri.core.callers import LOCAL, Caller
from colibri.core.spec import Tool

if TYPE_CHECKING:
    import anyio

    from colibri.chain.group import GroupCommit
    from colibri.core.state import ServerState
    from colibri.storage.audit_log import AuditLog, OpenRow

Envelope = dict[str, Any]


@dataclass(slots=True)
class Call:
    """One tools/call as it moves through the chain; stages fill in what they learn."""

    tool_name: str
    raw_arguments: object
    caller: Caller = LOCAL  # the proved principal; audit rows (and the log) record its name
    tool: Tool | None = None
    arguments: BaseModel | None = None
    correlation_id: str = ""
    audit_row: OpenRow | None = None  # the `actions` row audit-enter opened
    started: float = 0.0
    started_at: str = ""  # UTC timestamp for the audit row
    inline: bool = False  # answered on the event loop without the lock (the system tools)
    writes: bool = False  # the tool writes, or this call of it does (Tool.writes_for)
    envelope: Envelope | None = None
    text: str | None = None  # the envelope as JSON, once audit-exit has serialised it
    trace_id: str | None = None  # the OpenTelemetry trace the call is part of, kept on its audit row
    receipt: object = None  # the log entry of its row (a Receipt), once written in the answer's transaction


Next = Callable[[Call], Awaitable[Envelope]]


@dataclass(frozen=True, slots=True)
class ChainDeps:
    """Everything a stage may need, built once at start-up."""

    tools: Mapping[str, Tool]
    state: ServerState
    audit: AuditLog
    lock: anyio.Lock
    group: GroupCommit  # runs calls under `lock`, writes batched into shared transactions


class Stage(Protocol):
    def __init__(self, deps: ChainDeps) -> None: ...

    async def __call__(self, call: Call, call_next: Next) -> Envelope: ...
