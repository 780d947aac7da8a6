"""Stage 3 — audit-enter: open the `actions` row before anything runs.

A write tool's row is opened inside the transaction that holds its writes and its outcome (the
one the chain's group commit opened, chain/group.py), so they commit together or not at all: a
write is never committed without its row. A storage error here fails that transaction, and the
group refuses every call in it with a message that says to retry: nothing was written.

A read tool's row is written on its own; if the sink fails the read still runs (the response
comes first, SPEC §1.5). A call answered inline (chain/tool_lock.py) gets its row later, whole.
"""

from __future__ import annotations

import logging
import time

from colibri.chain.types import Call, ChainDeps, Envelope, Next
from colibri.core import ids
from colibri.core.clock import utc_now
from colibri.core.errors import StorageError

log = logging.getLogger("colibri.chain")


class AuditEnter:
    def __init__(self, deps: ChainDeps) -> None:
        self._audit = deps.audit
        self._state = deps.state

    async def __call__(self, call: Call, call_next: Next) -> Envelope:
        assert call.arguments is not None and call.tool is not None
        call.correlation_id = ids.correlation_id()
        call.started = time.perf_counter()
        call.started_at = utc_now()
        if call.inline:
            return await call_next(call)
        db = self._state.db
        if call.writes and db is not None and self._audit.writes():
            assert db.in_transaction, "a write call runs inside the group's transaction"
            self._enter(call)
            return await call_next(call)
        try:
            self._enter(call)
        except StorageError as exc:
            # The spec puts the response first: a broken sink is reported, never fatal.
            log.error("audit sink failed at audit-enter for %s: %s", call.tool_name, exc)
        return await call_next(call)

    def _enter(self, call: Call) -> None:
        assert call.arguments is not None
        call.audit_row = self._audit.open_row(
            call.correlation_id,
            call.tool_name,
            call.arguments.model_dump_json(),
            call.caller,  # the whole identity: its issuer and token_id go in the row too (SPEC §20)
            call.started_at,
            trace_id=call.trace_id,
        )
