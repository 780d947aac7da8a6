"""What the switchboard (and `colibri switchboard pins`, and the UI's pins page) use of the pins."""

from __future__ import annotations

from colibri.domains.pins.store import (
    DIGEST_VERSION,
    FIRST_LISTING,
    NothingToApprove,
    NotTheReviewedVersion,
    Pin,
    all_pins,
    approve,
    find_pin,
    has_pins,
    mark_shown,
    note_change,
    pin_first,
    pinned_definition,
    repin,
)
from colibri.domains.pins.texts import changed_fields, pretty, unified_diff

__all__ = [
    "DIGEST_VERSION",
    "FIRST_LISTING",
    "NotTheReviewedVersion",
    "NothingToApprove",
    "Pin",
    "all_pins",
    "approve",
    "changed_fields",
    "find_pin",
    "has_pins",
    "mark_shown",
    "note_change",
    "pin_first",
    "pinned_definition",
    "pretty",
    "repin",
    "unified_diff",
]
