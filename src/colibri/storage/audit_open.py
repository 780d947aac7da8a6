"""What the chain keeps of an `actions` row between audit-enter and audit-exit (audit_log.py), and
the digest the debug log shows of a call's arguments."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from colibri.core.database import Cursor


@dataclass(slots=True)
class OpenRow:
    """An `actions` row opened at audit-enter: what it holds, and its number once the database
    has answered (`number` is then the INSERT's cursor, read on first use)."""

    correlation_id: str
    tool: str
    arguments: str
    principal: str
    started_at: str
    in_transaction: bool  # opened inside the write transaction that will also close it
    number: Cursor | int | None
    trace_id: str | None = None

    @property
    def sequence_no(self) -> int | None:
        if self.number is None or isinstance(self.number, int):
            return self.number
        row = self.number.fetchone()
        self.number = None if row is None else int(row[0])
        return self.number


def digest(arguments: str) -> str:
    """What the debug log shows of a call's arguments: enough to match calls, nothing to read."""
    return "sha256:" + hashlib.sha256(arguments.encode()).hexdigest()[:16]
