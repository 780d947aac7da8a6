"""Opaque task_list cursors: where the previous page stopped, in a form callers should not edit.

Pages are keyset pages over the task's creation number, so inserting tasks between calls never
makes a page repeat or skip an existing task.
"""

from __future__ import annotations

import base64
import json

_PREFIX = "c1."


def encode_cursor(after_number: int) -> str:
    payload = json.dumps({"after": after_number}, separators=(",", ":")).encode()
    return _PREFIX + base64.urlsafe_b64encode(payload).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    """The creation number the next page starts after; ValueError if `cursor` is not ours."""
    problem = (
        "is not a cursor task_list returned; pass next_cursor from the previous page unchanged, "
        "or omit cursor to start from the first page"
    )
    if not cursor.startswith(_PREFIX):
        raise ValueError(problem)
    body = cursor.removeprefix(_PREFIX)
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:  # binascii.Error, UnicodeDecodeError and JSONDecodeError all are
        raise ValueError(problem) from None
    after = payload.get("after") if isinstance(payload, dict) else None
    if type(after) is not int or after < 0:
        raise ValueError(problem)
    return after
