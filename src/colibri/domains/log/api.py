"""What other domains (and the audit writer, through the chain) may use of the verifiable log."""

from __future__ import annotations

from colibri.core.database import Database
from colibri.domains.log.appends import adopt_existing, log_action, log_record
from colibri.domains.log.continuity import KeyContinuityError
from colibri.domains.log.keys import read_signer
from colibri.domains.log.models import LogStatus
from colibri.domains.log.notary import SEAL
from colibri.domains.log.note import NoteError, Signer, Verifier
from colibri.domains.log.policy import PolicyError
from colibri.domains.log.receipts import RECEIPT, ActionLog, Receipt
from colibri.domains.log.store import seal_checkpoint
from colibri.domains.log.tree import prepare_append

__all__ = [
    "RECEIPT",
    "SEAL",
    "ActionLog",
    "KeyContinuityError",
    "LogStatus",
    "NoteError",
    "PolicyError",
    "Receipt",
    "Signer",
    "Verifier",
    "adopt_existing",
    "log_action",
    "log_record",
    "log_status",
    "prepare_append",
    "read_signer",
    "seal_checkpoint",
]


def log_status(db: Database) -> LogStatus:
    """The log rechecked for audit_verify_chain (status.py)."""
    # Imported here, not above: the recheck reads the trail's api, and the trail imports this
    # module while it loads, so a module-level import would make the two wait on each other.
    from colibri.domains.log.status import log_status as recheck

    return recheck(db)
