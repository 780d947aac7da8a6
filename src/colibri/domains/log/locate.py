"""Where a finished call's entry sits in the log, found without an index on (kind, ref).

`log_entries` has no secondary index: every call writes its entry, and each index would add
pages to every write. Entries are appended in commit order, so their source rows' times (a
record's `created_at`, a call's `started_at` plus its duration, which is when it finished)
rise with the index, up to clock skew between processes and calls committed a moment after
they finished. A binary search by that time lands beside the entry; windows around the spot,
growing fourfold, then find it in a few range reads of the primary key. Only when the times
mislead (altered rows) does the search widen to the whole log, and an entry not found then
is truly missing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from colibri.core.database import Connection
from colibri.domains.log import tree

FIRST_WINDOW = 512  # entries on each side of the spot the search lands on


def action_index(conn: Connection, sequence_no: int, finished_at: datetime | None) -> int | None:
    """The index of the entry of call `sequence_no`, or None when the log holds none.

    `finished_at` is when the call finished (None when its times do not parse: the whole log is
    then searched outward from its middle)."""
    size = tree.size(conn)
    if size == 0:
        return None
    spot = size // 2 if finished_at is None else _spot(conn, finished_at, size)
    lo = hi = spot  # [lo, hi) has been searched
    window = FIRST_WINDOW
    while lo > 0 or hi < size:
        new_lo, new_hi = max(0, spot - window), min(size, spot + window)
        for first, end in ((new_lo, lo), (hi, new_hi)):
            found = _in_range(conn, sequence_no, first, end)
            if found is not None:
                return found
        lo, hi, window = new_lo, new_hi, window * 4
    return None


def _in_range(conn: Connection, sequence_no: int, first: int, end: int) -> int | None:
    if first >= end:
        return None
    row = conn.execute(
        "SELECT idx FROM log_entries WHERE idx >= ? AND idx < ? AND kind = ? AND ref = ? LIMIT 1",
        (first, end, tree.ACTION, sequence_no),
    ).fetchone()
    return None if row is None else int(row[0])


def _spot(conn: Connection, finished_at: datetime, size: int) -> int:
    """The first index whose entry's time is not before `finished_at` (size when none is)."""
    lo, hi = 0, size
    while lo < hi:
        middle = (lo + hi) // 2
        moment = _entry_time(conn, middle)
        if moment is not None and moment < finished_at:
            lo = middle + 1
        else:
            hi = middle
    return min(lo, size - 1)


def _entry_time(conn: Connection, index: int) -> datetime | None:
    """When the entry's source row was written (None when it cannot tell)."""
    row = conn.execute(
        "SELECT CASE e.kind WHEN 'record' THEN r.created_at ELSE a.started_at END, a.duration_ms"
        " FROM log_entries e"
        " LEFT JOIN thought_records r ON e.kind = 'record' AND r.seq = e.ref"
        " LEFT JOIN actions a ON e.kind = 'action' AND a.sequence_no = e.ref"
        " WHERE e.idx = ?",
        (index,),
    ).fetchone()
    if row is None or row[0] is None:
        return None
    return finished(str(row[0]), row[1])


def finished(started_at: str, duration_ms: object) -> datetime | None:
    """When a call that started at `started_at` and took `duration_ms` finished (None: unreadable)."""
    try:
        moment = datetime.fromisoformat(started_at)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if isinstance(duration_ms, int | float) and not isinstance(duration_ms, bool):
        try:
            moment += timedelta(milliseconds=duration_ms)
        except (OverflowError, ValueError):  # out of datetime's range, or not a number (NaN)
            return None
    return moment
