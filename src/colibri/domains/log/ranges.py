"""What one range of the fast pass found (fastcheck.py), and whether the ranges together log
every row: each record once and in order, each finished call once."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

from colibri.core.database import Connection


@dataclass(slots=True)
class RangeCheck:
    """What one range found; `ok` is False at the first entry that does not match."""

    lo: int
    hi: int
    ok: bool = True
    chunk_roots: list[bytes] = field(default_factory=list)
    partial_roots: dict[int, bytes] = field(default_factory=dict)  # size -> MTH(D[chunk start:size])
    first_record: int | None = None
    last_record: int | None = None
    records: int = 0
    action_refs: bytes = b""
    upper_nodes: dict[int, bytes] = field(default_factory=dict)  # stored ancestors of its chunks


@dataclass(frozen=True, slots=True)
class RowCounts:
    """What the rows say the log must hold: records 1..last_seq, and every finished call."""

    records: int
    last_seq: int
    finished_actions: int


def row_counts(conn: Connection) -> RowCounts:
    records, last_seq = conn.execute("SELECT count(*), coalesce(max(seq), 0) FROM thought_records").fetchone()
    finished = conn.execute("SELECT count(*) FROM actions WHERE outcome != 'running'").fetchone()[0]
    return RowCounts(records, last_seq, finished)


def all_logged(rows: RowCounts, parts: list[RangeCheck]) -> bool:
    """Record entries name seq 1..n in order and every record; action entries name every
    finished call once."""
    expected = 1
    records = 0
    for part in parts:
        if part.records:
            if part.first_record != expected:
                return False
            expected = (part.last_record or 0) + 1
            records += part.records
    if (records, expected - 1) != (rows.records, rows.last_seq):
        return False
    refs: array[int] = array("q")
    for part in parts:
        refs.frombytes(part.action_refs)
    return bool(len(refs) == rows.finished_actions == len(set(refs)))
