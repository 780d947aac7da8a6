"""Opaque task_list cursors: where the previous page stopped, in a form callers should not edit.

Pages are keyset pages over the task's creation number, so inserting tasks between calls never
makes a page repeat or skip an existing task.
"""

from __future__ import annotations

import base64
import json

_PREFIX = "c1."
_MAX_AFTER = 2**63 - 1  # SQLite's largest integer: a bigger one cannot be bound as a parameter
# Our cursors are about 30 characters; anything much longer is not one, and is not decoded at all.
_MAX_LENGTH = 64


def encode_cursor(after_number: int) -> str:
    payload = json.dumps({"after": after_number}, separators=(",", ":")).encode()
    return _PREFIX + base64.urlsafe_b64encode(payload).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    """The creation number the next page starts after; ValueError if `cursor` is not ours."""
    problem = (
        "is not a cursor task_list returned; pass next_cursor from the previous page unchanged, "
        "or omit cursor to start from the first page"
    )
    if not cursor.startswith(_PREFIX) or len(cursor) > _MAX_LENGTH:
        raise ValueError(problem)
    body = cursor.removeprefix(_PREFIX)
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (
        ValueError,
        RecursionError,
    ):  # binascii.Error, UnicodeDecodeError, JSONDecodeError are ValueErrors
        raise ValueError(problem) from None
    after = payload.get("after") if isinstance(payload, dict) else None
    if type(after) is not int or not 0 <= after <= _MAX_AFTER:
        raise ValueError(problem)
    return after
