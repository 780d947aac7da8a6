"""`colibri switchboard approvals list|approve|deny`: the held calls read from the audit store, and a
person's decision written there, logged, where the waiting call (audit/approvals.py) finds it within
its poll (SPEC §22).
"""

from __future__ import annotations

from colibri.core.clock import utc_now
from colibri.core.errors import StorageError
from colibri.domains.approvals import api as approvals
from colibri.domains.log.api import log_action
from colibri.switchboard.audit.approval import opened
from colibri.switchboard.audit.store import AuditStoreError
from colibri.switchboard.config import AuditSpec


def held_calls(spec: AuditSpec) -> list[approvals.Approval]:
    """Every held call still waiting for a decision, oldest first."""
    db = opened(spec)
    try:
        with db.snapshot() as conn:
            return approvals.pending(conn, utc_now())
    except StorageError as exc:
        raise AuditStoreError(f"audit store {spec}: {exc}") from None
    finally:
        db.close()


def decide_held(
    spec: AuditSpec, approval_id: str, approve: bool, by: str, comment: str
) -> approvals.Approval:
    """Approve or deny a held call as `by` (`via: cli`), logged; `approvals.NotDecidable` when `by`
    may not (logged too)."""
    db = opened(spec)
    try:
        return approvals.decided(db, approval_id, approve, by, (), comment, "cli", log_action)
    except StorageError as exc:
        raise AuditStoreError(f"audit store {spec}: {exc}") from None
    finally:
        db.close()
