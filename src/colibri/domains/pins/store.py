"""Pins read, made, noted, re-pinned, shown and approved; each function runs in the caller's
transaction."""

from __future__ import annotations

from dataclasses import dataclass

from colibri.core.database import Connection, Row

DIGEST_VERSION = 2  # the fields a digest covers now: everything a client is shown (schema.py)
FIRST_LISTING = "first listing"  # `pinned_by` of a pin made when its tool was first listed
REPINNED = "re-pinned at upgrade"  # `pinned_by` in pin_definitions of a pin re-pinned as version 2

_COLUMNS = (
    "tool, sha256, definition, pinned_at, pinned_by, seen_sha256, seen_definition, seen_at,"
    " digest_version, seen_digest_version, shown_sha256"
)


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
    digest_version: int = DIGEST_VERSION  # which fields `sha256` covers (see schema.py)
    seen_digest_version: int | None = None
    shown_sha256: str | None = None  # the seen digest the last `pins show` displayed

    @property
    def changed(self) -> bool:
        """Whether a listing showed a definition other than the approved one."""
        return self.seen_sha256 is not None


class NothingToApprove(LookupError):
    """Approval was asked for a tool with no pin, or whose definition has not changed."""


class NotTheReviewedVersion(ValueError):
    """Approval was asked for a version other than the one listed now (or than the one shown)."""


def all_pins(conn: Connection) -> list[Pin]:
    return [_pin(row) for row in conn.execute(f"SELECT {_COLUMNS} FROM tool_pins ORDER BY tool")]


def has_pins(conn: Connection) -> bool:
    """Whether any tool is pinned: only a switchboard's audit store has pins."""
    return conn.execute("SELECT 1 FROM tool_pins LIMIT 1").fetchone() is not None


def find_pin(conn: Connection, tool: str) -> Pin | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM tool_pins WHERE tool = ?", (tool,)).fetchone()
    return None if row is None else _pin(row)


def pin_first(
    conn: Connection, tool: str, sha256: str, definition: str, at: str, *, version: int = DIGEST_VERSION
) -> bool:
    """Pin a tool on its first listing; False when it has a pin already (another process's)."""
    cursor = conn.execute(
        "INSERT INTO tool_pins (tool, sha256, definition, pinned_at, pinned_by, digest_version)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tool) DO NOTHING",
        (tool, sha256, definition, at, FIRST_LISTING, version),
    )
    if cursor.rowcount != 1:
        return False
    _keep(conn, tool, sha256, definition, version=version, at=at, by=FIRST_LISTING)
    return True


def note_change(
    conn: Connection, tool: str, sha256: str, definition: str, at: str, *, version: int = DIGEST_VERSION
) -> bool:
    """Keep a differing definition a listing showed, for approval; False when it is the pinned one
    or already noted."""
    cursor = conn.execute(
        "UPDATE tool_pins SET seen_sha256 = ?, seen_definition = ?, seen_at = ?, seen_digest_version = ?"
        " WHERE tool = ? AND sha256 != ? AND (seen_sha256 IS NULL OR seen_sha256 != ?)",
        (sha256, definition, at, version, tool, sha256, sha256),
    )
    return cursor.rowcount == 1


def repin(
    conn: Connection, tool: str, previous: str, sha256: str, *, definition: str, at: str, version: int
) -> bool:
    """Re-pin a pin of an older digest version whose definition has not changed by that version's
    fields as `sha256` of `version`; False when it is no longer that pin (approved meanwhile)."""
    cursor = conn.execute(
        "UPDATE tool_pins SET sha256 = ?, definition = ?, digest_version = ?"
        " WHERE tool = ? AND sha256 = ? AND digest_version < ?",
        (sha256, definition, version, tool, previous, version),
    )
    if cursor.rowcount != 1:
        return False
    # A change noted before the upgrade that is this very definition is no change any more.
    conn.execute(
        "UPDATE tool_pins SET seen_sha256 = NULL, seen_definition = NULL, seen_at = NULL,"
        " seen_digest_version = NULL WHERE tool = ? AND seen_sha256 = ?",
        (tool, sha256),
    )
    _keep(conn, tool, sha256, definition, version=version, at=at, by=REPINNED)
    return True


def mark_shown(conn: Connection, tool: str, sha256: str) -> None:
    """Note that `pins show` displayed the seen definition `sha256` of `tool` to a person."""
    conn.execute("UPDATE tool_pins SET shown_sha256 = ? WHERE tool = ?", (sha256, tool))


def approve(conn: Connection, tool: str, by: str, at: str, sha256: str | None = None) -> tuple[Pin, Pin]:
    """Make the noted definition of `tool` its pin; returns the pin before and after.

    `sha256` is the version the person approves; without it, the one the last `pins show`
    displayed. NothingToApprove when the tool has no pin or no changed definition waiting;
    NotTheReviewedVersion when the definition waiting is another one.
    """
    before = find_pin(conn, tool)
    if before is None:
        raise NothingToApprove(f"{tool} has no pin; `colibri switchboard pins list` shows the pinned tools")
    seen, text = before.seen_sha256, before.seen_definition
    if seen is None or text is None:
        raise NothingToApprove(f"{tool} has not changed since it was pinned (sha256 {before.sha256})")
    _check_version(before, seen, sha256)
    # The WHERE holds the version checked above: a switchboard noting another one meanwhile wins.
    cursor = conn.execute(
        "UPDATE tool_pins SET sha256 = seen_sha256, definition = seen_definition, pinned_at = ?,"
        " pinned_by = ?, digest_version = COALESCE(seen_digest_version, digest_version),"
        " seen_sha256 = NULL, seen_definition = NULL, seen_at = NULL, seen_digest_version = NULL,"
        " shown_sha256 = NULL WHERE tool = ? AND seen_sha256 = ?",
        (at, by, tool, seen),
    )
    if cursor.rowcount != 1:
        raise NotTheReviewedVersion(f"{tool}: its listed definition changed while it was being approved")
    version = before.seen_digest_version or before.digest_version
    _keep(conn, tool, seen, text, version=version, at=at, by=by)
    return before, Pin(tool, seen, text, at, by, digest_version=version)


def pinned_definition(conn: Connection, tool: str, sha256: str) -> str | None:
    """The text of a definition `tool` was ever pinned at, by its digest."""
    row = conn.execute(
        "SELECT definition FROM pin_definitions WHERE tool = ? AND sha256 = ?", (tool, sha256)
    ).fetchone()
    return None if row is None else str(row[0])


def _check_version(pin: Pin, seen: str, sha256: str | None) -> None:
    show = f"`colibri switchboard pins show {pin.tool}` shows it"
    if sha256 is not None and sha256 != seen:
        raise NotTheReviewedVersion(
            f"{pin.tool}: the definition listed now is sha256 {seen}, not the {sha256} given to --sha256; "
            f"{show}"
        )
    if sha256 is None and pin.shown_sha256 is None:
        raise NotTheReviewedVersion(
            f"{pin.tool}: no `pins show` has displayed its listed definition (sha256 {seen}); {show}, "
            f"then approve it, or pass --sha256 {seen}"
        )
    if sha256 is None and pin.shown_sha256 != seen:
        raise NotTheReviewedVersion(
            f"{pin.tool}: the definition listed now is sha256 {seen}, not the {pin.shown_sha256} the last "
            f"`pins show` displayed; {show} again"
        )


def _keep(
    conn: Connection, tool: str, sha256: str, definition: str, *, version: int, at: str, by: str
) -> None:
    conn.execute(
        "INSERT INTO pin_definitions (tool, sha256, definition, digest_version, pinned_at, pinned_by)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tool, sha256) DO NOTHING",
        (tool, sha256, definition, version, at, by),
    )


def _pin(row: Row) -> Pin:
    def text(value: object) -> str | None:
        return None if value is None else str(value)

    tool, sha256, definition, pinned_at, pinned_by = (str(row[index]) for index in range(5))
    seen_version = None if row[9] is None else int(row[9])
    return Pin(
        tool,
        sha256,
        definition,
        pinned_at,
        pinned_by,
        text(row[5]),
        text(row[6]),
        text(row[7]),
        int(row[8]),
        seen_version,
        text(row[10]),
    )
