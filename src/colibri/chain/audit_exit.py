"""Stage 5 — audit-exit: close the `actions` row with outcome, result hash and duration."""

from __future__ import annotations

import logging
import time
from functools import partial

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
        self._group = deps.group

    async def __call__(self, call: Call, call_next: Next) -> Envelope:
        result = call.envelope
        assert result is not None
        call.text = to_json(result)
        try:
            data = call.text.encode()  # once: what the hash reads is what proves it encodable
        except UnicodeEncodeError:
            # A string with lone surrogates (a file name that is not UTF-8, say) would make the
            # hash, the audit row and the reply itself fail: send and record it escaped instead.
            result = call.envelope = printable_tree(result)
            call.text = to_json(result)
            data = call.text.encode()
        outcome = envelope.outcome(result)
        duration_ms = (time.perf_counter() - call.started) * 1000
        result_hash = envelope.digest_of(data)
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
            call.receipt = self._inline(row)
        else:
            try:
                call.receipt = self._audit.close_row(call.audit_row, outcome, result_hash, duration_ms)
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

    def _inline(self, row: FinishedCall) -> object:
        """A call answered inline has its row written now when that waits for nothing, and its answer
        then carries the entry's receipt (SPEC §22); else the row follows within a second (SPEC §14)
        and the answer goes without one: a system tool never waits for another call (SPEC §8)."""
        try:
            receipt = self._group.at_once(partial(self._audit.write_row, row))
        except StorageError as exc:
            log.warning("audit row of %s not written at once (%s); it waits for the next try", row.tool, exc)
            receipt = None
        if receipt is None:
            self._audit.later(row)
        return receipt
