"""Stage 3 — audit-enter: open the `actions` row before anything runs."""

from __future__ import annotations

import logging
import time

from colibri.chain.types import Call, ChainDeps, Envelope, Next
from colibri.core import ids
from colibri.core.errors import StorageError

log = logging.getLogger("colibri.chain")


class AuditEnter:
    def __init__(self, deps: ChainDeps) -> None:
        self._audit = deps.audit

    async def __call__(self, call: Call, call_next: Next) -> Envelope:
        assert call.arguments is not None
        call.correlation_id = ids.correlation_id()
        call.started = time.perf_counter()
        try:
            call.sequence_no = self._audit.enter(
                call.correlation_id,
                call.tool_name,
                call.arguments.model_dump_json(),
                call.caller.principal,
            )
        except StorageError as exc:
            # The spec puts the response first: a broken sink is reported, never fatal.
            log.error("audit sink failed at audit-enter for %s: %s", call.tool_name, exc)
        return await call_next(call)
