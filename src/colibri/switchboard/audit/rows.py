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
(SPEC §17). A row another process swept meanwhile (a `colibri serve` booting on the same
store) is written again whole, so the outcome is never lost.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field

from colibri.core import ids
from colibri.core.clock import utc_now
from colibri.core.database import Connection
from colibri.core.errors import StorageError
from colibri.core.traces import current_trace_id
from colibri.domains.log.api import log_action
from colibri.storage.audit_log import FinishedCall, close_running, insert_finished, open_running
from colibri.switchboard.audit.digests import arguments_column, result_digest
from colibri.switchboard.audit.writer import Now, Writer
from colibri.switchboard.base import HANDLER_ERROR
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

    def __init__(self, writer: Writer) -> None:
        self._writer = writer

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
        closings = _closings(record, call, answer)
        record.closed = True
        sent = bool(record.opened)
        try:
            written = self._writer.write(lambda conn: _close(conn, closings))
        except StorageError as exc:
            raise _failed(call, exc, sent) from exc
        return None if isinstance(written, Now) else _committed(call, written, sent)

    def after_answer(self, call: RoutedCall, answer: Answer) -> None:
        record = call.record
        if answer.outcome is Outcome.CANCELLED and isinstance(record, Record) and record.opened:
            closings = _closings(record, call, answer)
            self._writer.submit(
                lambda conn: _close(conn, closings), f"the end of the cancelled {call.subject}"
            )


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
        row = FinishedCall(
            record.correlation_id,
            tool or call.subject,
            record.arguments,
            outcome,
            answered if last else None,
            record.started_at,
            duration_ms,
            call.principal,
            record.trace_id,
        )
        closings.append(_Closing(row, sequence_no))
    return closings


def _close(conn: Connection, closings: list[_Closing]) -> None:
    for closing in closings:
        row = closing.row
        if closing.sequence_no is not None and close_running(
            conn, closing.sequence_no, row.outcome, row.result_hash, row.duration_ms, log_action
        ):
            continue
        insert_finished(conn, row, log_action)


async def _committed(call: RoutedCall, written: Awaitable[None], sent: bool) -> None:
    try:
        await written
    except StorageError as exc:
        raise _failed(call, exc, sent) from exc


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
