"""A person's decision on a held call, inside the caller's transaction (SPEC §22; store.py holds them).

The decision is an `event` row `switchboard:approvals/approve` or `/deny` whose principal is the
approver and whose arguments name the approval, the call's principal, tool and arguments digest and
pin, the comment and where it was made (`via`: cli, ui, ask_user), logged with the change. A
decision refused (not an approver, the caller's own call, nothing to decide) is a `denied` row of
the same tool, written by `refused` in a transaction of its own, since the refused one rolls back.
"""

from __future__ import annotations

from collections.abc import Sequence

from colibri.core import ids
from colibri.core.database import Connection
from colibri.core.jcs import canonical
from colibri.domains.approvals.store import APPROVE, DENY, GROUP, Approval, find
from colibri.storage.audit_rows import FinishedCall, LogAction, insert_finished


class NotDecidable(Exception):
    """A decision that cannot be made; `why` is one word (unknown, expired, decided, own_call,
    not_an_approver) and the message says it to a person."""

    def __init__(self, why: str, message: str) -> None:
        super().__init__(message)
        self.why = why


def may_decide(approval: Approval, by: str, groups: Sequence[str] = ()) -> bool:
    """Whether `by` (with its IdP `groups`) is one of the approval's approvers."""
    return any(
        by == name or (name.startswith(GROUP) and name.removeprefix(GROUP) in groups)
        for name in approval.approvers
    )


def decide(  # noqa: PLR0917 - the decision's parts, in the order a person gives them
    conn: Connection,
    approval_id: str,
    approve: bool,
    by: str,
    groups: Sequence[str],
    comment: str,
    via: str,
    now: str,
    on_finished: LogAction,
) -> Approval:
    """Decide a pending approval and log the decision; `NotDecidable` when it cannot be decided by
    `by`. An approval given is usable by its call until the approval's `expires_at` (the ttl counts
    from the moment the call was held, so a call cannot be approved and kept for later)."""
    approval = find(conn, approval_id)
    if approval is None:
        raise NotDecidable(
            "unknown",
            f"no held call has the approval id {approval_id!r}; `colibri switchboard approvals list` (or "
            "/approvals in colibri ui) shows the held calls and their ids",
        )
    if approval.state != "pending":
        raise NotDecidable("decided", f"{approval_id} is {approval.state} already ({_decided(approval)})")
    if approval.expires_at <= now:
        conn.execute("UPDATE approvals SET state = 'expired', arguments = NULL WHERE id = ?", (approval_id,))
        raise NotDecidable(
            "expired", f"{approval_id} expired at {approval.expires_at}: the call was not decided in time"
        )
    if approval.mode == "ask_user" and via != "ask_user":
        raise NotDecidable(
            "own_call", f"{approval_id} is for its caller's own user ({approval.principal}) to decide"
        )
    if approval.mode == "approver":
        if by == approval.principal:
            raise NotDecidable(
                "own_call", f"{by} made the call {approval_id} holds: a caller cannot approve its own call"
            )
        if not may_decide(approval, by, groups):
            raise NotDecidable(
                "not_an_approver",
                f"{by} is not an approver of {approval_id}; its rule names {', '.join(approval.approvers)}",
            )
    state = "approved" if approve else "denied"
    conn.execute(
        "UPDATE approvals SET state = ?, decided_by = ?, decided_via = ?, comment = ?, decided_at = ?"
        + ("" if approve else ", arguments = NULL")
        + " WHERE id = ?",
        (state, by, via, comment, now, approval_id),
    )
    insert_finished(conn, _event(approval, APPROVE if approve else DENY, by, comment, via, now), on_finished)
    decided = find(conn, approval_id)
    assert decided is not None
    return decided


def refused(  # noqa: PLR0917 - as `decide`
    conn: Connection, approval_id: str, approve: bool, by: str, why: NotDecidable, via: str, now: str,
    on_finished: LogAction,
) -> None:  # fmt: skip
    """Log a refused decision: a `denied` row of the decision's tool naming who tried and why."""
    approval = find(conn, approval_id)
    arguments = canonical(
        {"approval": approval_id, "via": via} | ({} if approval is None else _named(approval))
    )
    row = FinishedCall(
        _correlation(approval), APPROVE if approve else DENY, arguments, "denied", None, now, 0.0, by,
        None, f"approval:{why.why}", str(why)[:300],
    )  # fmt: skip
    insert_finished(conn, row, on_finished)


def _event(approval: Approval, tool: str, by: str, comment: str, via: str, now: str) -> FinishedCall:  # noqa: PLR0917
    arguments = canonical({"approval": approval.id, "comment": comment, "via": via} | _named(approval))
    return FinishedCall(approval.correlation_id, tool, arguments, "event", None, now, 0.0, by)


def _named(approval: Approval) -> dict[str, object]:
    return {
        "principal": approval.principal,
        "tool": approval.tool,
        "arguments_sha256": approval.arguments_sha256,
        "pin_sha256": approval.pin_sha256,
    }


def _correlation(approval: Approval | None) -> str:
    return ids.correlation_id() if approval is None else approval.correlation_id


def _decided(approval: Approval) -> str:
    if approval.decided_by is None:
        return "nobody decided it"
    return f"by {approval.decided_by} at {approval.decided_at}"
