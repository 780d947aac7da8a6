"""Stage 5 — audit-exit: close the `actions` row with outcome, result hash and duration."""

from __future__ import annotations

import logging
import time

from colibri.chain import envelope
from colibri.chain.types import Call, ChainDeps, Envelope, Next
from colibri.core.envelope_text import to_json
from colibri.core.errors import StorageError

log = logging.getLogger("colibri.chain")


class AuditExit:
    def __init__(self, deps: ChainDeps) -> None:
        self._audit = deps.audit

    async def __call__(self, call: Call, call_next: Next) -> Envelope:
        result = call.envelope
        assert result is not None
        call.text = to_json(result)
        outcome = envelope.outcome(result)
        duration_ms = (time.perf_counter() - call.started) * 1000
        try:
            self._audit.exit(call.sequence_no, outcome, envelope.digest(call.text), duration_ms)
        except StorageError as exc:
            log.error("audit sink failed at audit-exit for %s: %s", call.tool_name, exc)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "dispatch tool=%s correlation_id=%s outcome=%s duration_ms=%.3f",
                call.tool_name,
                call.correlation_id,
                outcome,
                duration_ms,
            )
        return result
