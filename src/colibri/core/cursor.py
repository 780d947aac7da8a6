"""Opaque page cursors, one codec for every list tool: the position after which the next page starts.

Pages are keyset pages over a number that never changes (a task's creation number, a record's
seq), so inserting rows between calls never makes a page repeat or skip an existing row. A
cursor is that number behind an opaque encoding; anything this server did not issue, or a
number no row can have, is refused with a message that says what to pass instead.
"""

from __future__ import annotations

import base64
import binascii

_PREFIX = "after:"
MAX_SEQ = 2**63 - 1  # the largest integer SQLite (and PostgreSQL's bigint) can store
# Our cursors are at most 34 characters; anything much longer is not one, and is not decoded at all.
_MAX_LENGTH = 64


def encode_cursor(after: int) -> str:
    """The cursor of the page that starts after position `after`."""
    return base64.urlsafe_b64encode(f"{_PREFIX}{after}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str, *, first_page: str = "the first page") -> int:
    """The position a cursor points after; ValueError for anything this server did not issue.

    `first_page` names what omitting the cursor gives, for the refusal's advice.
    """
    text = ""
    if len(cursor) <= _MAX_LENGTH:
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
            f"unchanged, or omit cursor to start from {first_page}"
        )
    return int(number)
