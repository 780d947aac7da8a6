"""What the switchboard, `colibri switchboard approvals` and `colibri ui`'s /approvals use (SPEC §22)."""

from __future__ import annotations

from collections.abc import Sequence

from colibri.core.clock import utc_now
from colibri.core.database import Database
from colibri.domains.approvals.decisions import NotDecidable, decide, may_decide, refused
from colibri.domains.approvals.store import (
    APPROVE,
    DENY,
    Approval,
    Held,
    find,
    hold,
    interrupt_pending,
    pending,
    states,
    take,
    unasked,
    use,
    waiting,
)
from colibri.storage.audit_rows import LogAction

__all__ = [
    "APPROVE",
    "DENY",
    "Approval",
    "Held",
    "NotDecidable",
    "decide",
    "decided",
    "find",
    "hold",
    "interrupt_pending",
    "may_decide",
    "pending",
    "refused",
    "states",
    "take",
    "unasked",
    "use",
    "waiting",
]


def decided(  # noqa: PLR0917 - the decision's parts, as `decide` takes them
    db: Database,
    approval_id: str,
    approve: bool,
    by: str,
    groups: Sequence[str],
    comment: str,
    via: str,
    on_finished: LogAction,
) -> Approval:
    """A person's decision in its own transaction, logged; a refused one (`NotDecidable`, raised) is
    logged too, in a transaction of its own, since the decision's rolls back."""
    now = utc_now()
    try:
        with db.atomic() as conn:
            return decide(conn, approval_id, approve, by, groups, comment, via, now, on_finished)
    except NotDecidable as exc:
        with db.atomic() as conn:
            if exc.why == "expired":
                conn.execute(
                    "UPDATE approvals SET state = 'expired', arguments = NULL WHERE id = ?", (approval_id,)
                )
            refused(conn, approval_id, approve, by, exc, via, now, on_finished)
        raise
