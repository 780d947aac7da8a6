"""Held calls, inside the caller's transaction (SPEC §22; schema.py has the rows; decisions.py decides).

Every step that the log must show is an `actions` row written whole and logged in the same
transaction as the change it records: the call's `held` row when it is held (its arguments digest,
its `result_hash` the tool's pin digest, since a held call has no result, and its
`reason_message` the rule), and the `interrupted` row of a call a restart ended while it waited.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from colibri.core.database import Connection
from colibri.storage.audit_held import HELD
from colibri.storage.audit_rows import FinishedCall, LogAction, insert_finished

APPROVE = "switchboard:approvals/approve"
DENY = "switchboard:approvals/deny"
GROUP = "group:"
_COLUMNS = (
    "id, correlation_id, held_sequence_no, principal, tool, arguments_sha256, arguments, pin_sha256,"
    " definition, rule, approvers, mode, state, held_at, expires_at, decided_by, decided_via, comment,"
    " decided_at, used_at"
)


@dataclass(frozen=True, slots=True)
class Approval:
    """One held call and where its approval stands (schema.py)."""

    id: str
    correlation_id: str
    held_sequence_no: int | None
    principal: str
    tool: str
    arguments_sha256: str
    arguments: str | None
    pin_sha256: str | None
    definition: str | None
    rule: str
    approvers: tuple[str, ...]
    mode: str
    state: str
    held_at: str
    expires_at: str
    decided_by: str | None = None
    decided_via: str | None = None
    comment: str | None = None
    decided_at: str | None = None
    used_at: str | None = None


@dataclass(frozen=True, slots=True)
class Held:
    """What the switchboard knows of a call it holds."""

    correlation_id: str
    principal: str
    tool: str
    arguments_sha256: str
    arguments: str  # JCS of the arguments, shown to the approvers
    pin_sha256: str | None
    definition: str | None
    rule: str  # the rule's JSON path and the rule, as JSON
    approvers: tuple[str, ...]
    mode: str
    issuer: str | None = None
    token_id: str | None = None


def later(at: str, seconds: float) -> str:
    """The clock's text for `seconds` after `at`."""
    moment = datetime.strptime(at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def hold(conn: Connection, call: Held, now: str, ttl_s: float, on_finished: LogAction) -> Approval:
    """Record a held call: its approval, pending until `ttl_s` from now, and its `held` row, logged."""
    approval_id = "ap_" + secrets.token_hex(8)
    message = (
        f"held for approval {approval_id} by {json.loads(call.rule)['rule']}; pin sha256 "
        f"{call.pin_sha256 or 'none'}"
    )
    row = FinishedCall(
        call.correlation_id, call.tool, f'{{"sha256":"{call.arguments_sha256}"}}', HELD, call.pin_sha256,
        now, 0.0, call.principal, None, "approval_held", message[:300], call.issuer, call.token_id,
    )  # fmt: skip
    sequence_no = insert_finished(conn, row, on_finished)
    conn.execute(
        "INSERT INTO approvals (id, correlation_id, held_sequence_no, principal, tool, arguments_sha256,"
        " arguments, pin_sha256, definition, rule, approvers, mode, state, held_at, expires_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
        (approval_id, call.correlation_id, sequence_no, call.principal, call.tool, call.arguments_sha256,
         call.arguments, call.pin_sha256, call.definition, call.rule, json.dumps(list(call.approvers)),
         call.mode, now, later(now, ttl_s)),
    )  # fmt: skip
    found = find(conn, approval_id)
    assert found is not None
    return found


def find(conn: Connection, approval_id: str) -> Approval | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM approvals WHERE id = ?", (approval_id,)).fetchone()
    return None if row is None else _approval(row)


def pending(conn: Connection, now: str) -> list[Approval]:
    """Every approval still to be decided, oldest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM approvals WHERE state = 'pending' AND expires_at > ? ORDER BY held_at, id",
        (now,),
    ).fetchall()
    return [_approval(row) for row in rows]


def waiting(conn: Connection, principal: str, tool: str, arguments_sha256: str, now: str) -> list[str]:
    """The pending approvals of this very call (a retry after APPROVAL_PENDING waits on them)."""
    rows = conn.execute(
        "SELECT id FROM approvals WHERE state = 'pending' AND principal = ? AND tool = ? AND"
        " arguments_sha256 = ? AND expires_at > ? ORDER BY held_at",
        (principal, tool, arguments_sha256, now),
    ).fetchall()
    return [str(row[0]) for row in rows]


def take(conn: Connection, principal: str, tool: str, arguments_sha256: str, now: str) -> str | None:
    """Use an approval given to this very call (same principal, tool and arguments digest), unused and
    within its ttl: it covers this call and no other. Its id, or None when there is none."""
    row = conn.execute(
        "SELECT id FROM approvals WHERE state = 'approved' AND principal = ? AND tool = ? AND"
        " arguments_sha256 = ? AND expires_at > ? ORDER BY decided_at LIMIT 1",
        (principal, tool, arguments_sha256, now),
    ).fetchone()
    if row is None:
        return None
    return str(row[0]) if use(conn, str(row[0]), now) else None


def use(conn: Connection, approval_id: str, now: str) -> bool:
    """Mark an approved approval used by its one call; False when it is not approved (any more)."""
    used = conn.execute(
        "UPDATE approvals SET state = 'used', used_at = ?, arguments = NULL WHERE id = ? AND"
        " state = 'approved' AND expires_at > ? RETURNING id",
        (now, approval_id, now),
    ).fetchone()
    return used is not None


def unasked(conn: Connection, approval_id: str) -> None:
    """An `ask_user` hold whose client cannot be asked: nobody may decide it."""
    conn.execute(
        "UPDATE approvals SET state = 'unasked', arguments = NULL WHERE id = ? AND state = 'pending'",
        (approval_id,),
    )


def states(conn: Connection, ids: Sequence[str]) -> dict[str, Approval]:
    """The approvals of `ids` that are no longer pending (the waiting calls' news)."""
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM approvals WHERE id IN ({marks}) AND state != 'pending'", tuple(ids)
    ).fetchall()
    return {str(row[0]): _approval(row) for row in rows}


def interrupt_pending(conn: Connection, now: str, on_finished: LogAction) -> int:
    """At a switchboard's start: the calls held by a process that stopped can wait no longer. Each
    pending approval becomes `interrupted`, with an `interrupted` row of its call, logged; an
    approval already given stays usable by the retried call within its ttl."""
    rows = conn.execute(
        "UPDATE approvals SET state = 'interrupted', arguments = NULL WHERE state = 'pending'"
        f" RETURNING {_COLUMNS}"
    ).fetchall()
    for approval in sorted((_approval(row) for row in rows), key=lambda approval: approval.held_at):
        row = FinishedCall(
            approval.correlation_id, approval.tool, f'{{"sha256":"{approval.arguments_sha256}"}}',
            "interrupted", None, now, 0.0, approval.principal, None, "approval_interrupted",
            f"held for approval {approval.id} when the switchboard stopped; the call may be made again",
        )  # fmt: skip
        insert_finished(conn, row, on_finished)
    return len(rows)


def _approval(row: Sequence[object]) -> Approval:
    values = list(row)
    values[2] = None if values[2] is None else int(str(values[2]))
    values[10] = tuple(json.loads(str(values[10])))
    return Approval(*values)  # type: ignore[arg-type]
