"""Stage 5 — audit-exit: close the `actions` row with outcome, result hash and duration."""

from __future__ import annotations

import logging
import time

from colibri.chain import envelope
from colibri.chain.types import Call, ChainDeps, Envelope, Next
from colibri.core.envelope_text import to_json
from colibri.core.errors import StorageError
from colibri.core.text import printable_tree
from colibri.storage.audit_log import FinishedCall

log = logging.getLogger("colibri.chain")


class AuditExit:
    def __init__(self, deps: ChainDeps) -> None:
        self._audit = deps.audit

    async def __call__(self, call: Call, call_next: Next) -> Envelope:
        result = call.envelope
        assert result is not None
        call.text = to_json(result)
        if not envelope.encodable(call.text):
            # A string with lone surrogates (a file name that is not UTF-8, say) would make the
            # hash, the audit row and the reply itself fail: send and record it escaped instead.
            result = call.envelope = printable_tree(result)
            call.text = to_json(result)
        outcome = envelope.outcome(result)
        duration_ms = (time.perf_counter() - call.started) * 1000
        result_hash = envelope.digest(call.text)
        if call.inline:
            assert call.arguments is not None
            arguments = call.arguments.model_dump_json()
            row = FinishedCall(
                call.correlation_id,
                call.tool_name,
                arguments,
                outcome,
                result_hash,
                call.started_at,
                duration_ms,
                call.caller.principal,
                call.trace_id,
                issuer=call.caller.issuer,
                token_id=call.caller.token_id,
            )
            self._audit.later(row)
        else:
            try:
                self._audit.close_row(call.audit_row, outcome, result_hash, duration_ms)
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
