"""Stage 3 — audit-enter: open the `actions` row before anything runs.

A write tool's row is opened inside the transaction that holds its writes and its outcome, so
they commit together or not at all: a write is never committed without its row. If that
transaction cannot start (another process holds the database) or cannot commit, nothing was
written and the call is refused with a message that says to retry.

A read tool's row is written on its own; if the sink fails the read still runs (the response
comes first, SPEC §1.5). A call answered inline (chain/tool_lock.py) gets its row later, whole.
"""

from __future__ import annotations

import logging
import time

from colibri.chain.errors import HandlerError
from colibri.chain.types import Call, ChainDeps, Envelope, Next
from colibri.core import ids
from colibri.core.clock import utc_now
from colibri.core.errors import StorageError
from colibri.storage.errors import BusyError

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
        if call.tool.writes and db is not None and self._audit.writes():
            try:
                with db.atomic():
                    self._enter(call)
                    return await call_next(call)
            except StorageError as exc:
                raise _not_written(call.tool_name, exc) from None
        try:
            self._enter(call)
        except StorageError as exc:
            # The spec puts the response first: a broken sink is reported, never fatal.
            log.error("audit sink failed at audit-enter for %s: %s", call.tool_name, exc)
        return await call_next(call)

    def _enter(self, call: Call) -> None:
        assert call.arguments is not None
        call.sequence_no = self._audit.enter(
            call.correlation_id,
            call.tool_name,
            call.arguments.model_dump_json(),
            call.caller.principal,
            call.started_at,
            trace_id=call.trace_id,
        )


def _not_written(tool: str, exc: StorageError) -> HandlerError:
    if isinstance(exc, BusyError):
        why = "the database is locked by another connection and stayed locked while this call waited"
    else:
        why = f"the database refused the transaction ({exc})"
    return HandlerError(
        f"{tool} was not run: {why}; nothing was written (neither the change nor its audit row) - "
        "retry the call",
        retryable=True,
    )
