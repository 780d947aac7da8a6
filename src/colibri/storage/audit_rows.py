"""Rows of the `actions` table, written inside the caller's transaction, each finished row with
its log entry (`on_finished`, the verifiable log's appender): a row opened `running` and closed
with its outcome, a finished row written whole, and the sweep of rows a dead process left running.

`colibri serve` writes them through its chain (audit_log.py); the switchboard's audit store
(SPEC §15) through its own writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from colibri.core.database import Connection, Cursor, Database
from colibri.core.identity import Identity


@dataclass(frozen=True, slots=True)
class FinishedCall:
    """A call answered without the database, to be recorded whole later."""

    correlation_id: str
    tool: str
    arguments: str
    outcome: str
    result_hash: str | None  # None for a denied call: it produced no result of its own
    started_at: str
    duration_ms: float
    principal: str
    trace_id: str | None = None  # the OpenTelemetry trace the call belonged to (SPEC §17)
    reason: str | None = None  # why it was refused (core/reasons.py); a row column, not in its entry
    reason_message: str | None = None  # the refusal's one-line message
    issuer: str | None = None  # who issued the caller's credential (core/identity.py, SPEC §20)
    token_id: str | None = None  # the credential's id: a JWT's jti, else the token's SHA-256
    via: str | None = None  # the gateway that vouched for the principal (0033)


class LogAction(Protocol):
    """Appends a finished action to the verifiable log inside the caller's transaction."""

    def __call__(  # noqa: PLR0917 - positional in the order the audit row holds them
        self,
        conn: Connection,
        sequence_no: int,
        correlation_id: str,
        tool: str,
        arguments: str,
        outcome: str,
        result_sha256: str | None,
        started_at: str,
        duration_ms: float | None,
        principal: str,
        /,
    ) -> object: ...


def not_logged(*_: object) -> object:
    return None


_OPEN = (
    "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at, principal, trace_id)"
    " VALUES (?, ?, ?, 'running', ?, ?, ?) RETURNING sequence_no"
)
# A caller a credential proved also has its issuer and token_id (0032), and the gateway that vouched
# for it, if one did (0033); stdio's leave them out.
_OPEN_IDENTIFIED = (
    "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at, principal, trace_id, issuer,"
    " token_id, via) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?) RETURNING sequence_no"
)
_OPEN_NUMBERED = (
    "INSERT INTO actions (sequence_no, correlation_id, tool, arguments, outcome, started_at, principal,"
    " trace_id) VALUES (?, ?, ?, ?, 'running', ?, ?, ?)"
)
_OPEN_NUMBERED_IDENTIFIED = (
    "INSERT INTO actions (sequence_no, correlation_id, tool, arguments, outcome, started_at, principal,"
    " trace_id, issuer, token_id, via) VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)"
)
_COLUMNS = (
    "correlation_id, tool, arguments, outcome, result_hash, started_at, duration_ms, principal, trace_id"
)


@cache
def _finished_sql(identified: bool, refused: bool) -> str:
    """The INSERT of a finished row: with issuer, token_id and via when a credential or a gateway
    proved its caller (0032, 0033), with reason and reason_message when it was refused (0030); the
    others leave those columns out, as before them."""
    columns = (
        _COLUMNS
        + (", issuer, token_id, via" if identified else "")
        + (", reason, reason_message" if refused else "")
    )
    marks = ", ".join("?" * (columns.count(",") + 1))
    return f"INSERT INTO actions ({columns}) VALUES ({marks}) RETURNING sequence_no"


def open_running(  # noqa: PLR0917 - positional in the order the audit row holds them
    conn: Connection,
    correlation_id: str,
    tool: str,
    arguments: str,
    principal: str,
    started_at: str,
    trace_id: str | None = None,
    identity: Identity | None = None,
) -> Cursor:
    """Open a call's row, `running`, before the call runs. Its sequence_no is the cursor's one row,
    read when needed (`int(cursor.fetchone()[0])`): on PostgreSQL the statement is pipelined, and
    reading it waits for the server. `identity` (of `principal`) gives the issuer, token_id and via."""
    values = (correlation_id, tool, arguments, started_at, principal, trace_id)
    named = _named(identity)
    if named is None:
        return conn.execute(_OPEN, values)
    return conn.execute(_OPEN_IDENTIFIED, (*values, *named))


def open_numbered(  # noqa: PLR0917 - positional in the order the audit row holds them
    conn: Connection,
    number: int,
    correlation_id: str,
    tool: str,
    arguments: str,
    principal: str,
    started_at: str,
    trace_id: str | None = None,
    identity: Identity | None = None,
) -> None:
    """`open_running` with the sequence_no taken ahead (`Dialect.next_serials`): nothing to read back,
    so on PostgreSQL a batch's calls wait for no row's number."""
    values = (number, correlation_id, tool, arguments, started_at, principal, trace_id)
    named = _named(identity)
    if named is None:
        conn.execute(_OPEN_NUMBERED, values)
    else:
        conn.execute(_OPEN_NUMBERED_IDENTIFIED, (*values, *named))


def _named(identity: Identity | None) -> tuple[str | None, str | None, str | None] | None:
    """The issuer, token_id and via an opened row names, or None where it names none of them."""
    if identity is None or (identity.issuer is None and identity.token_id is None and identity.via is None):
        return None
    return identity.issuer, identity.token_id, identity.via


class Kept:
    """A `LogAction` that keeps what the one it wraps returned for the last row it logged (the
    entry's receipt, SPEC §22: domains/log/receipts.py), for the caller to read once it committed."""

    __slots__ = ("_log", "value")

    def __init__(self, log: LogAction) -> None:
        self._log = log
        self.value: object = None

    def __call__(self, *row: Any) -> object:
        self.value = self._log(*row)
        return self.value


def log_finished(conn: Connection, sequence_no: int, row: FinishedCall, on_finished: LogAction) -> object:
    """Hand a row that reached its final outcome to the log's appender, in the caller's transaction;
    returns what the appender did."""
    return on_finished(
        conn,
        sequence_no,
        row.correlation_id,
        row.tool,
        row.arguments,
        row.outcome,
        row.result_hash,
        row.started_at,
        row.duration_ms,
        row.principal,
    )


def close_running(  # noqa: PLR0917 - positional in the order the audit row holds them
    conn: Connection,
    sequence_no: int,
    outcome: str,
    result_hash: str | None,
    duration_ms: float,
    on_finished: LogAction = not_logged,
    reason: tuple[str, str] | None = None,
) -> bool:
    """Close a row still `running` with its outcome (and `reason`, code and message, when it was
    refused), and log it, inside the caller's transaction. False when the row was not running
    (closed already, or swept as interrupted)."""
    returning = " WHERE sequence_no = ? AND outcome = 'running' RETURNING correlation_id, tool, arguments,"
    if reason is None:
        row = conn.execute(
            "UPDATE actions SET outcome = ?, result_hash = ?, duration_ms = ?" + returning + " started_at,"
            " principal",
            (outcome, result_hash, duration_ms, sequence_no),
        ).fetchone()
    else:
        row = conn.execute(
            "UPDATE actions SET outcome = ?, result_hash = ?, duration_ms = ?, reason = ?, reason_message = ?"
            + returning
            + " started_at, principal",
            (outcome, result_hash, duration_ms, *reason, sequence_no),
        ).fetchone()
    if row is None:
        return False
    correlation_id, tool, arguments, started_at, principal = row
    closed = FinishedCall(
        correlation_id, tool, arguments, outcome, result_hash, started_at, duration_ms, principal
    )
    log_finished(conn, sequence_no, closed, on_finished)
    return True


def insert_finished(conn: Connection, row: FinishedCall, on_finished: LogAction = not_logged) -> int:
    """Write a finished call's row whole, and its log entry, inside the caller's transaction;
    returns its sequence_no."""
    return write_finished(conn, [row], on_finished)[0]


def write_finished(
    conn: Connection, rows: Sequence[FinishedCall], on_finished: LogAction = not_logged
) -> list[int]:
    """Insert the rows and log each; returns their numbers. Every INSERT is sent before the first
    number is read, so on PostgreSQL all of them cost one round trip."""
    inserted = [conn.execute(_finished_sql(*_shape(row)), _values(row)) for row in rows]
    numbers = [int(cursor.fetchone()[0]) for cursor in inserted]
    for row, sequence_no in zip(rows, numbers, strict=True):
        log_finished(conn, sequence_no, row, on_finished)
    return numbers


def _shape(r: FinishedCall) -> tuple[bool, bool]:
    return (r.issuer is not None or r.token_id is not None or r.via is not None, r.reason is not None)


def _values(r: FinishedCall) -> tuple[object, ...]:
    identified, refused = _shape(r)
    return (r.correlation_id, r.tool, r.arguments, r.outcome, r.result_hash, r.started_at, r.duration_ms,
            r.principal, r.trace_id, *((r.issuer, r.token_id, r.via) if identified else ()),
            *((r.reason, r.reason_message) if refused else ()))  # fmt: skip


def mark_interrupted(
    db: Database, on_finished: LogAction = not_logged, tools_like: tuple[str, ...] = ()
) -> int:
    """Rows left `running` by a process that died can never finish: say so, and log them.

    `tools_like` (LIKE patterns) limits the sweep to one program's rows, so that a program sharing
    the store sweeps only its own (the switchboard's tools are `server.tool` or `server:method`;
    `colibri serve`'s never hold a dot or a colon)."""
    where = " OR ".join("tool LIKE ?" for _ in tools_like)
    with db.atomic() as conn:
        rows = conn.execute(
            "UPDATE actions SET outcome = 'interrupted' WHERE outcome = 'running'"
            + (f" AND ({where})" if where else "")
            + " RETURNING sequence_no, correlation_id, tool, arguments, outcome, result_hash, started_at,"
            " duration_ms, principal",
            tools_like,
        ).fetchall()
        for row in sorted(rows, key=lambda row: int(row[0])):
            on_finished(conn, *row)
        return len(rows)
