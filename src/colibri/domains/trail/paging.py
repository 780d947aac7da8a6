"""Opaque cursors for thought_record_list: the position after which the next page starts."""

from __future__ import annotations

import base64
import binascii

_PREFIX = "after:"
MAX_SEQ = 2**63 - 1  # SQLite's largest integer; no seq can be greater


def encode_cursor(seq: int) -> str:
    """The cursor of the page that starts after record `seq`."""
    return base64.urlsafe_b64encode(f"{_PREFIX}{seq}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    """The seq a cursor points after; ValueError for anything this server did not issue."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    number = text.removeprefix(_PREFIX)
    # At most 19 digits before int(): a longer number is out of range anyway, and int() of a
    # very long digit string raises its own ValueError.
    valid = text.startswith(_PREFIX) and number.isascii() and number.isdigit() and len(number) <= 19
    # Re-encoding must give the cursor back: base64 decoding alone would ignore stray characters.
    if not valid or int(number) > MAX_SEQ or encode_cursor(int(number)) != cursor:
        raise ValueError(
            "cursor is not one this server issued; pass next_cursor from the previous page "
            "unchanged, or omit cursor to start from the oldest record"
        )
    return int(number)
