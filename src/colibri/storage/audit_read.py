"""Reading the `actions` table back: newest first, keyset pages, optional filters."""

from __future__ import annotations

from dataclasses import dataclass

from colibri.core.database import Connection


@dataclass(frozen=True, slots=True)
class ActionRow:
    """One audited call as the audit page shows it."""

    sequence_no: int
    correlation_id: str
    tool: str
    principal: str
    outcome: str
    started_at: str
    duration_ms: float | None
    reason: str | None = None  # why it was refused (SPEC §21); None also on a store from before 0030


def list_actions(
    conn: Connection,
    *,
    before: int | None,
    limit: int,
    tool: str | None = None,
    principal: str | None = None,
    outcome: str | None = None,
    tool_like: str | None = None,
    events: bool = True,
) -> list[ActionRow]:
    """Up to `limit` actions with sequence_no below `before` (all when None), newest first,
    matching every filter given; `tool_like` is a LIKE pattern (escape `\\`, any case); without
    `events`, the switchboard's own events (outcome `event`: pins, approvals) are left out.
    Walks the primary key backwards: no scan of the whole table."""
    clauses = ["sequence_no < ?"]
    params: list[object] = [2**63 - 1 if before is None else before]
    for column, value in (("tool", tool), ("principal", principal), ("outcome", outcome)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if tool_like is not None:
        clauses.append(f"tool {conn.dialect.like} ? ESCAPE '\\'")
        params.append(tool_like)
    if not events:
        clauses.append("outcome != 'event'")
    reason = "reason" if _has_reason(conn) else "NULL"
    rows = conn.tuples(
        f"SELECT sequence_no, correlation_id, tool, principal, outcome, started_at, duration_ms, {reason}"
        f" FROM actions WHERE {' AND '.join(clauses)} ORDER BY sequence_no DESC LIMIT ?",
        (*params, limit),
    )
    return [ActionRow(*row) for row in rows]


@dataclass(frozen=True, slots=True)
class StoredAction:
    """One audited call with every stored field, as the call's own page shows it."""

    sequence_no: int
    correlation_id: str
    tool: str
    principal: str
    arguments: str
    outcome: str
    result_hash: str | None
    started_at: str
    duration_ms: float | None
    trace_id: str | None  # None also where the store has no trace_id column yet
    reason: str | None = None  # why it was refused, and its message (SPEC §21, 0030)
    reason_message: str | None = None
    issuer: str | None = None  # what proved the caller (SPEC §20, 0032): None for a Colibri token
    token_id: str | None = None  # the token's SHA-256 (or a JWT's jti); None on stdio
    via: str | None = None  # the gateway that vouched for the principal (SPEC §20, 0033)


def get_action(conn: Connection, sequence_no: int) -> StoredAction | None:
    """The call numbered `sequence_no`, or None. The trace id is read where the column exists
    (SPEC §17 adds it), so the page works on stores from before it and after."""
    columns = {str(row[0]) for row in conn.execute(conn.dialect.table_columns, ("actions",))}
    trace = "trace_id" if "trace_id" in columns else "NULL"
    why = "reason, reason_message" if "reason" in columns else "NULL, NULL"
    who = _IDENTITY if "token_id" in columns else "NULL, NULL"
    via = "via" if "via" in columns else "NULL"
    row = conn.tuples(
        "SELECT sequence_no, correlation_id, tool, principal, arguments, outcome, result_hash, started_at,"
        f" duration_ms, {trace}, {why}, {who}, {via} FROM actions WHERE sequence_no = ?",
        (sequence_no,),
    ).fetchone()
    return None if row is None else StoredAction(*row)


_IDENTITY = "issuer, token_id"


def _has_reason(conn: Connection) -> bool:
    """Whether the store has 0030's columns (a page reads stores from before it too)."""
    return _has(conn, "reason")


def _has(conn: Connection, column: str) -> bool:
    return any(str(row[0]) == column for row in conn.execute(conn.dialect.table_columns, ("actions",)))


@dataclass(frozen=True, slots=True)
class ActionSummary:
    """What `colibri log entries --rows` prints of a call beside its entry's hash."""

    principal: str
    tool: str
    outcome: str
    reason: str | None
    reason_message: str | None
    issuer: str | None = None  # what proved the caller (SPEC §20); None also before 0032
    token_id: str | None = None
    via: str | None = None  # the gateway that vouched for the principal; None also before 0033


def action_summaries(conn: Connection, first: int, last: int) -> dict[int, ActionSummary]:
    """The calls numbered first..last, by number: one range scan of the primary key."""
    why = "reason, reason_message" if _has_reason(conn) else "NULL, NULL"
    who = _IDENTITY if _has(conn, "token_id") else "NULL, NULL"
    via = "via" if _has(conn, "via") else "NULL"
    rows = conn.tuples(
        f"SELECT sequence_no, principal, tool, outcome, {why}, {who}, {via} FROM actions"
        " WHERE sequence_no BETWEEN ? AND ?",
        (first, last),
    )
    return {int(row[0]): ActionSummary(*row[1:]) for row in rows}
