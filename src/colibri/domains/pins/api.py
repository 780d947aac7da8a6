"""What the switchboard and `colibri switchboard pins` may use of the pins."""

from __future__ import annotations

from colibri.domains.pins.store import (
    FIRST_LISTING,
    NothingToApprove,
    Pin,
    all_pins,
    approve,
    find_pin,
    note_change,
    pin_first,
)

__all__ = [
    "FIRST_LISTING",
    "NothingToApprove",
    "Pin",
    "all_pins",
    "approve",
    "find_pin",
    "note_change",
    "pin_first",
]
