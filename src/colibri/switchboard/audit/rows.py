"""`Audit`: every routed request in the audit store, one `actions` row and log entry per attempt
(SPEC §15), committed before the answer leaves and opened before anything is sent.

    before_send    each entry about to be asked gets its row, `running`, committed first: a row
                   that cannot be written stops the call unsent (HANDLER_ERROR, retryable) — the
                   gateway does not act unrecorded
    before_answer  each attempt's row closed with its outcome, result digest and duration, and
                   logged; a call that reached no server (unknown, refused, nothing routable) is
                   one row written whole. The answer waits for the commit; if it fails, the client
                   hears HANDLER_ERROR instead (the call may have acted: its row stays `running`,
                   swept as `interrupted` at the next start)
    after_answer   a call given up (cancelled) closes its open rows as `interrupted`

Columns: `tool` is `server.tool` (the entry asked; the name asked when none was), or
`server:resources/read` / `server:prompts/get`; `principal` the token's name (`local` on stdio);
`arguments` and `result_hash` digests (digests.py); all attempts of one call share its
`correlation_id`; `trace_id` the OpenTelemetry trace the call was served in, when tracing is on
(SPEC §17); `reason` and `reason_message` why a refused call was refused (SPEC §21), read here, in
one place, from the refusal the client got (`_refusal`: its code through base/errors.py's
`refusal_reason`, its message as one escaped line). A name over 256 characters is recorded by its
length and digest (core/shown.py), so a refusal's row stays small. A row another process swept
meanwhile (a `colibri serve` booting on the same store) is written again whole, so the outcome is
never lost.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import mcp_types as types

from colibri.core import ids, reasons
from colibri.core.clock import utc_now
from colibri.core.database import Connection
from colibri.core.errors import StorageError
from colibri.core.shown import shown, too_long
from colibri.core.traces import current_trace_id
from colibri.domains.log.api import ActionLog
from colibri.storage.audit_log import FinishedCall, Kept, close_running, insert_finished, open_running
from colibri.switchboard.audit.digests import arguments_column, result_digest
from colibri.switchboard.audit.receipts import moved_aside, stamp
from colibri.switchboard.audit.writer import Now, Writer
from colibri.switchboard.base import HANDLER_ERROR, refusal_reason
from colibri.switchboard.routing import Answer, Observer, Outcome, Refusal, RoutedCall

log = logging.getLogger("colibri.switchboard")

# A call's outcome where no entry was asked, and an attempt's, as the `actions` table names them.
CALL_OUTCOMES = {
    Outcome.OK: "ok",
    Outcome.TOOL_ERROR: "error",
    Outcome.ERROR: "error",
    Outcome.TIMEOUT: "timeout",
    Outcome.UNAVAILABLE: "unavailable",
    Outcome.DENIED: "denied",
    Outcome.CANCELLED: "interrupted",
}
ATTEMPT_OUTCOMES = {"ok": "ok", "tool_error": "error", "error": "error", "timeout": "timeout"}


class AuditFailed(Exception):
    """A call's rows could not be committed: it is answered HANDLER_ERROR instead, `retryable` when
    nothing was sent (the route shows it in the envelope's details)."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(slots=True)
class Record:
    """What the audit keeps of one call between its moments (`RoutedCall.record`)."""

    correlation_id: str
    started_at: str
    started: float
    arguments: str
    trace_id: str | None
    opened: list[tuple[int, str]] = field(default_factory=list)  # (sequence_no, tool) per entry asked
    closed: bool = False  # its end is written (or on its way to the store)


@dataclass(frozen=True, slots=True)
class _Closing:
    """One row's end: the open row it closes (None: a row written whole), and its values."""

    row: FinishedCall
    sequence_no: int | None


class Audit(Observer):
    """The observer that records every routed request (see the module)."""

    def __init__(self, writer: Writer, origin: str | None = None) -> None:
        self._writer = writer
        self._log = ActionLog(origin)  # returns each entry's receipt (SPEC §22, receipts.py)

    def before_send(self, call: RoutedCall, target: str) -> Refusal | Awaitable[Refusal | None] | None:
        record = _record(call)

        def opening(conn: Connection) -> int:
            opened = open_running(
                conn,
                record.correlation_id,
                target,
                record.arguments,
                call.principal,
                record.started_at,
                record.trace_id,
                call.identity,  # what proved the principal: issuer and token_id (SPEC §20)
            )
            return int(opened.fetchone()[0])

        try:
            written = self._writer.write(opening)
        except StorageError as exc:
            return _unrecorded(call, target, exc)
        if isinstance(written, Now):
            record.opened.append((written.value, target))
            return None
        return self._opened_later(call, record, target, written)

    async def _opened_later(
        self, call: RoutedCall, record: Record, target: str, written: Awaitable[int]
    ) -> Refusal | None:
        try:
            record.opened.append((await written, target))
        except StorageError as exc:
            return _unrecorded(call, target, exc)
        return None

    def before_answer(self, call: RoutedCall, answer: Answer) -> Awaitable[None] | None:
        record = _record(call)
        moved_aside(answer)  # a downstream Colibri's receipt, before the digest is taken
        closings = _closings(record, call, answer)
        record.closed = True
        try:
            written = self._writer.write(partial(_close, self._log, closings))
        except StorageError as exc:
            raise _failed(call, exc, bool(record.opened)) from exc
        if isinstance(written, Now):
            stamp(answer, written.value)
            return None
        return _committed(call, written, answer)

    def after_answer(self, call: RoutedCall, answer: Answer) -> None:
        record = call.record
        if answer.outcome is Outcome.CANCELLED and isinstance(record, Record) and record.opened:
            ending = partial(_close, self._log, _closings(record, call, answer))
            self._writer.submit(ending, f"the end of the cancelled {call.subject}")


def _record(call: RoutedCall) -> Record:
    record = call.record
    if not isinstance(record, Record):
        record = call.record = Record(
            ids.correlation_id(),
            utc_now(),
            time.perf_counter(),
            arguments_column(call.arguments),
            current_trace_id(),
        )
    return record


def _closings(record: Record, call: RoutedCall, answer: Answer) -> list[_Closing]:
    """Each attempt's row (the last one carrying the answer's digest), or the call's one row."""
    attempts = [tried for tried in answer.tried if tried.outcome != "refused"]
    answered = result_digest(answer.result, answer.error)
    whole = CALL_OUTCOMES[answer.outcome]
    refused = None if attempts else _refusal(answer)
    if refused is not None and whole == "error":
        whole = "denied"  # refused before anything was sent (an observer's no at before_send)
    elapsed_ms = (time.perf_counter() - record.started) * 1000
    closings = []
    count = max(len(record.opened), len(attempts), 1)
    for index in range(count):
        last = index == count - 1
        sequence_no, tool = record.opened[index] if index < len(record.opened) else (None, None)
        if index < len(attempts):
            tried = attempts[index]
            outcome = (
                whole if last and answer.outcome is Outcome.CANCELLED else ATTEMPT_OUTCOMES[tried.outcome]
            )
            tool = tool or f"{tried.server}.{tried.target}"
            duration_ms = tried.seconds * 1000
        else:  # opened and never asked (stopped, cancelled), or no entry at all
            outcome, duration_ms = whole, elapsed_ms
        why = refused if last else None
        row = FinishedCall(
            record.correlation_id,
            tool or _subject(call),
            record.arguments,
            outcome,
            answered if last else None,
            record.started_at,
            duration_ms,
            call.principal,
            record.trace_id,
            None if why is None else why[0],
            None if why is None else why[1],
            None if call.identity is None else call.identity.issuer,
            None if call.identity is None else call.identity.token_id,
        )
        closings.append(_Closing(row, sequence_no))
    return closings


def _subject(call: RoutedCall) -> str:
    """The row's tool where no entry was asked: the name asked, by its digest when over 256 chars."""
    subject = call.subject
    return shown(subject) if too_long(subject) else subject


def _refusal(answer: Answer) -> tuple[str, str] | None:
    """The reason and one-line message of a refusal (None: the answer is not one), read from the
    Pattern A envelope the client got or the JSON-RPC error (`CODE: message`)."""
    if answer.outcome not in (Outcome.DENIED, Outcome.UNAVAILABLE, Outcome.ERROR):
        return None
    if answer.reason is not None and answer.error is not None:
        return answer.reason, reasons.message(answer.error.error.message)
    if answer.error is not None:
        code, _, message = answer.error.error.message.partition(": ")
        data = answer.error.error.data
        details = data if isinstance(data, dict) else None
    else:
        error = _envelope_error(answer.result)
        if error is None:
            return None
        code, message, details = str(error.get("code")), str(error.get("message")), error.get("details")
    reason = refusal_reason(code, details if isinstance(details, dict) else None)
    return None if reason is None else (reason, reasons.message(message))


def _envelope_error(result: object) -> dict[str, Any] | None:
    """The `error` of a Pattern A envelope of the switchboard's own making, else None."""
    if isinstance(result, dict):
        structured, content = result.get("structuredContent"), result.get("content")
    elif isinstance(result, types.CallToolResult):
        structured, content = result.structured_content, result.content
    else:
        return None
    if structured is None and content and isinstance(content[0], types.TextContent):
        try:
            structured = json.loads(content[0].text)
        except ValueError:
            return None
    error = structured.get("error") if isinstance(structured, dict) else None
    return error if isinstance(error, dict) else None


def _close(appender: ActionLog, closings: list[_Closing], conn: Connection) -> object:  # the last receipt
    logged = Kept(appender)
    for closing in closings:
        row = closing.row
        why = None if row.reason is None else (row.reason, row.reason_message or "")
        if closing.sequence_no is not None and close_running(
            conn, closing.sequence_no, row.outcome, row.result_hash, row.duration_ms, logged, why
        ):
            continue
        insert_finished(conn, row, logged)
    return logged.value


async def _committed(call: RoutedCall, written: Awaitable[object], answer: Answer) -> None:
    try:
        stamp(answer, await written)
    except StorageError as exc:
        raise _failed(call, exc, bool(_record(call).opened)) from exc


def _unrecorded(call: RoutedCall, target: str, exc: StorageError) -> Refusal:
    log.error("audit store: cannot record %s; not sent: %s", target, exc)
    return Refusal(
        HANDLER_ERROR,
        f"{call.subject} was not sent to {target}: the audit store cannot record it ({exc}); nothing was "
        "forwarded, retry the call",
        {"retryable": True},
    )


def _failed(call: RoutedCall, exc: StorageError, sent: bool) -> AuditFailed:
    log.error("audit store: cannot record the end of %s: %s", call.subject, exc)
    if not sent:
        return AuditFailed(
            f"{call.subject}: the audit store cannot record it ({exc}); nothing was forwarded, retry it",
            retryable=True,
        )
    return AuditFailed(
        f"{call.subject}: its audit row could not be committed ({exc}), so its answer is withheld; it was "
        "sent and may have acted (its row stays running, marked interrupted at the next start): check "
        "before repeating it",
        retryable=False,
    )
