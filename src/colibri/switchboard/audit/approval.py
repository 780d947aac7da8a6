"""`colibri switchboard pins list|show|approve --config F`: the pins read from the audit store, one
pin's changed definition shown to a person (noted, so that an approval is of what was shown), and a
changed definition approved by a person — recorded as an `actions` row and log entry
`switchboard:pins/approve` whose principal is the approver, with the tool and both digests as its
arguments, in the same transaction as the approval itself.
"""

from __future__ import annotations

import json

from colibri.core import ids
from colibri.core.clock import utc_now
from colibri.core.errors import StorageError
from colibri.domains.log.api import log_action
from colibri.domains.pins import api as pins
from colibri.storage import Database, open_database
from colibri.storage.audit_log import EVENT, FinishedCall, insert_finished
from colibri.storage.migrations import migrate
from colibri.switchboard.audit.store import AuditStoreError
from colibri.switchboard.config import AuditSpec
from colibri.tools.catalog import migrations_for

APPROVE = "switchboard:pins/approve"


def stored_pins(spec: AuditSpec) -> list[pins.Pin]:
    db = opened(spec)
    try:
        with db.snapshot() as conn:
            return pins.all_pins(conn)
    except StorageError as exc:
        raise AuditStoreError(f"audit store {spec}: {exc}") from None
    finally:
        db.close()


def show_pin(spec: AuditSpec, tool: str) -> pins.Pin | None:
    """The pin of `tool` (None: it has none), its changed definition noted as shown to a person."""
    db = opened(spec)
    try:
        with db.atomic() as conn:
            pin = pins.find_pin(conn, tool)
            if pin is not None and pin.seen_sha256 is not None:
                pins.mark_shown(conn, tool, pin.seen_sha256)
        return pin
    except StorageError as exc:
        raise AuditStoreError(f"audit store {spec}: {exc}") from None
    finally:
        db.close()


def approve(spec: AuditSpec, tool: str, by: str, sha256: str | None = None) -> tuple[pins.Pin, pins.Pin, int]:
    """Approve the changed definition of `tool` — version `sha256`, or else the one `pins show`
    displayed last; the pin before and after, and the log index of the approval's entry.
    `pins.NothingToApprove` or `pins.NotTheReviewedVersion` when there is nothing to approve."""
    db = opened(spec)
    try:
        with db.atomic() as conn:
            before, after = pins.approve(conn, tool, by, utc_now(), sha256)
            arguments = json.dumps(
                {"tool": tool, "previous_sha256": before.sha256, "sha256": after.sha256},
                sort_keys=True,
                separators=(",", ":"),
            )
            # The switchboard's own event, not a call (SPEC §21): outcome `event`
            row = FinishedCall(ids.correlation_id(), APPROVE, arguments, EVENT, None, utc_now(), 0.0, by)
            sequence_no = insert_finished(conn, row, log_action)
            index = conn.execute(
                "SELECT idx FROM log_entries WHERE kind = 'action' AND ref = ?", (sequence_no,)
            ).fetchone()[0]
        return before, after, int(index)
    except StorageError as exc:
        raise AuditStoreError(f"audit store {spec}: {exc}") from None
    finally:
        db.close()


def opened(spec: AuditSpec) -> Database:
    """The store of `spec`, open and migrated, for a command's one transaction."""
    try:
        db = open_database(spec.target)
    except StorageError as exc:
        raise AuditStoreError(f"audit store {spec}: {exc}") from None
    try:
        migrate(db, migrations_for(db.dialect.name))
    except StorageError as exc:
        db.close()
        raise AuditStoreError(f"audit store {spec}: {exc}") from None
    return db
