"""Pins read, made, noted and approved; each function runs in the caller's transaction."""

from __future__ import annotations

from dataclasses import dataclass

from colibri.core.database import Connection, Row

FIRST_LISTING = "first listing"  # `pinned_by` of a pin made when its tool was first listed

_COLUMNS = "tool, sha256, definition, pinned_at, pinned_by, seen_sha256, seen_definition, seen_at"


@dataclass(frozen=True, slots=True)
class Pin:
    """One tool's approved definition, and a differing one waiting for approval (if any)."""

    tool: str  # server.tool
    sha256: str
    definition: str
    pinned_at: str
    pinned_by: str
    seen_sha256: str | None = None
    seen_definition: str | None = None
    seen_at: str | None = None

    @property
    def changed(self) -> bool:
        """Whether a listing showed a definition other than the approved one."""
        return self.seen_sha256 is not None


class NothingToApprove(LookupError):
    """Approval was asked for a tool with no pin, or whose definition has not changed."""


def all_pins(conn: Connection) -> list[Pin]:
    return [_pin(row) for row in conn.execute(f"SELECT {_COLUMNS} FROM tool_pins ORDER BY tool")]


def find_pin(conn: Connection, tool: str) -> Pin | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM tool_pins WHERE tool = ?", (tool,)).fetchone()
    return None if row is None else _pin(row)


def pin_first(conn: Connection, tool: str, sha256: str, definition: str, at: str) -> bool:
    """Pin a tool on its first listing; False when it has a pin already (another process's)."""
    cursor = conn.execute(
        "INSERT INTO tool_pins (tool, sha256, definition, pinned_at, pinned_by) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (tool) DO NOTHING",
        (tool, sha256, definition, at, FIRST_LISTING),
    )
    return cursor.rowcount == 1


def note_change(conn: Connection, tool: str, sha256: str, definition: str, at: str) -> bool:
    """Keep a differing definition a listing showed, for approval; False when it is the pinned one
    or already noted."""
    cursor = conn.execute(
        "UPDATE tool_pins SET seen_sha256 = ?, seen_definition = ?, seen_at = ?"
        " WHERE tool = ? AND sha256 != ? AND (seen_sha256 IS NULL OR seen_sha256 != ?)",
        (sha256, definition, at, tool, sha256, sha256),
    )
    return cursor.rowcount == 1


def approve(conn: Connection, tool: str, by: str, at: str) -> tuple[Pin, Pin]:
    """Make the noted definition of `tool` its pin; returns the pin before and after.

    NothingToApprove when the tool has no pin or no changed definition waiting.
    """
    before = find_pin(conn, tool)
    if before is None:
        raise NothingToApprove(f"{tool} has no pin; `colibri switchboard pins list` shows the pinned tools")
    if before.seen_sha256 is None or before.seen_definition is None:
        raise NothingToApprove(f"{tool} has not changed since it was pinned (sha256 {before.sha256})")
    conn.execute(
        "UPDATE tool_pins SET sha256 = seen_sha256, definition = seen_definition, pinned_at = ?,"
        " pinned_by = ?, seen_sha256 = NULL, seen_definition = NULL, seen_at = NULL WHERE tool = ?",
        (at, by, tool),
    )
    after = Pin(tool, before.seen_sha256, before.seen_definition, at, by)
    return before, after


def _pin(row: Row) -> Pin:
    def text(value: object) -> str | None:
        return None if value is None else str(value)

    tool, sha256, definition, pinned_at, pinned_by = (str(row[index]) for index in range(5))
    return Pin(tool, sha256, definition, pinned_at, pinned_by, text(row[5]), text(row[6]), text(row[7]))
