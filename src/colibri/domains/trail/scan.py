"""The chain check: stream records in seq order, recompute every hash, check every link.

For each record the first failing check names the break, in this order:

    seq_gap             a seq is missing: expected = the missing seq, found = the next seq present
                        (null when none follows)
    hash_mismatch       the stored hash is not the hash of the stored fields: expected = the
                        recomputed hash, found = the stored one. Any altered byte in a record
                        (its id is derived from its hash) lands here, at that record's seq.
    prev_link_mismatch  the record is intact but its prev_hash is not the stored hash of the
                        record before it: expected = that hash, found = prev_hash. This is what a
                        record rewritten with a freshly computed hash leaves at the next seq.

After a break the scan carries on from the stored values, so one altered record is one break
and `checked` always counts every record in scope.

Speed (SPEC asks >= 300,000 records/s): rows come as plain tuples in batches, each record is
one f-string over the C JSON string encoder and one hashlib call, and the checks are three
comparisons folded into one `if`. Nothing else happens per row unless the row is broken or
belongs to a session whose Merkle leaves are being collected.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from colibri.domains.proofs.api import leaf_of_stored
from colibri.domains.trail.canonical import GENESIS_HASH, record_json, stored_record_hash
from colibri.storage import Connection
from colibri.storage.errors import DecodeError, OperationalError

SEQ_GAP = "seq_gap"
HASH_MISMATCH = "hash_mismatch"
PREV_LINK_MISMATCH = "prev_link_mismatch"
BATCH = 1024

Progress = Callable[[int], None]
Row = tuple[Any, ...]

_FIELDS = ("session_id", "kind", "content", "task_id", "agent_id", "created_at", "prev_hash", "hash")
_sha256 = hashlib.sha256


@dataclass(frozen=True, slots=True)
class Break:
    """Where and why the chain stops being what it claims."""

    seq: int
    reason: str
    expected: str | int | None
    found: str | int | None


@dataclass(slots=True)
class ScanResult:
    """What a scan saw. `leaves` holds the Merkle leaf hashes of the tracked sessions; `found`
    the first `keep` breaks, for a caller that places every break (the UI's overview)."""

    checked: int = 0
    last_seq: int | None = None
    last_hash: str | None = None
    first_break: Break | None = None
    breaks: int = 0
    predecessor_missing: bool = False
    leaves: dict[str, list[bytes]] = field(default_factory=dict)
    keep: int = 0
    found: list[Break] = field(default_factory=list)

    def add(self, found: Break) -> None:
        self.breaks += 1
        if self.first_break is None or found.seq < self.first_break.seq:
            self.first_break = found
        if len(self.found) < self.keep:
            self.found.append(found)


def scan_range(
    conn: Connection,
    first: int,
    last: int,
    *,
    track: Collection[str] = (),
    progress: Progress | None = None,
    keep: int = 0,
) -> ScanResult:
    """Check records `first`..`last` of the global chain, which must reach `last`.

    Record `first` is linked to the stored hash of `first - 1`. When that record is missing
    the scan cannot tell where the hole starts: it sets `predecessor_missing` and takes the
    first record it meets as its starting point. Leaf hashes of sessions in `track` are
    collected for seal checks; the first `keep` breaks are kept in `found`.
    """
    result = ScanResult(leaves={session_id: [] for session_id in track}, keep=keep)
    if first > last:
        return result
    expect: int | None = first
    prev: str | None = GENESIS_HASH
    if first > 1:
        prev = _stored_hash(conn, first - 1)
        if prev is None:
            result.predecessor_missing = True
            expect = None
    sql = "SELECT {} FROM thought_records WHERE seq BETWEEN ? AND ? ORDER BY seq"
    for rows in _batches(conn, sql, (first, last)):
        expect, prev = _check(rows, expect, prev, result)
        if progress is not None:
            progress(len(rows))
    if expect is not None and expect <= last:
        result.add(Break(expect, SEQ_GAP, expect, next_seq_after(conn, last)))
    return result


def _check(rows: list[Row], expect: int | None, prev: Any, result: ScanResult) -> tuple[int, Any]:
    """The hot loop over one batch; returns the (expected seq, previous hash) to carry on with."""
    sha, canonical = _sha256, record_json  # locals: one global lookup per batch, not per row
    leaves = result.leaves
    if expect is None:  # starting after a hole: the first row is the reference point
        expect, prev = rows[0][0], rows[0][7]
    for seq, sid, kind, content, task_id, agent_id, created_at, prev_hash, stored in rows:
        try:
            digest = sha(
                canonical(seq, sid, kind, content, task_id, agent_id, created_at, prev_hash).encode()
            ).hexdigest()
        except (TypeError, UnicodeEncodeError):  # not clean text: only a tampered row
            digest = stored_record_hash(seq, sid, kind, content, task_id, agent_id, created_at, prev_hash)
        if seq != expect or digest != stored or prev_hash != prev:
            result.add(_classify((seq, prev_hash, stored), expect, digest, prev))
        if sid in leaves:
            leaf = (
                sha(b"\x00" + bytes.fromhex(stored)).digest() if digest == stored else leaf_of_stored(stored)
            )
            leaves[sid].append(leaf)
        prev = stored
        expect = seq + 1
    result.checked += len(rows)
    result.last_seq, result.last_hash = rows[-1][0], shown(rows[-1][8])
    return expect, prev


def _classify(row: tuple[int, object, object], expect: int, digest: str, prev: str) -> Break:
    seq, prev_hash, stored = row
    if seq != expect:
        return Break(expect, SEQ_GAP, expect, seq)
    if digest != stored:
        return Break(seq, HASH_MISMATCH, digest, shown(stored))
    return Break(seq, PREV_LINK_MISMATCH, shown(prev), shown(prev_hash))


def next_seq_after(conn: Connection, seq: int) -> int | None:
    """The first seq present after `seq`, or None."""
    row = conn.execute("SELECT min(seq) FROM thought_records WHERE seq > ?", (seq,)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def shown(value: object) -> str | None:
    """A stored value as printable text for a report: bytes that are not UTF-8 (only a
    tampered row holds them) appear as U+FFFD instead of breaking the JSON or the terminal."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _stored_hash(conn: Connection, seq: int) -> str | None:
    hash_bytes = conn.dialect.as_bytes("hash")
    row = conn.execute(f"SELECT {hash_bytes} FROM thought_records WHERE seq = ?", (seq,)).fetchone()
    return None if row is None else str(_decode(row[0]))


def _batches(conn: Connection, sql: str, params: tuple[object, ...], alias: str = "") -> Iterator[list[Row]]:
    """Rows in batches, `{}` in `sql` standing for the record columns; `seq` is the first column
    and the last-but-one parameter is the lower seq bound, so a read can resume.

    Text that is not UTF-8 (only a tampered row can hold it) makes the driver raise while
    fetching; the next BATCH rows are then re-read as BLOBs and decoded with surrogateescape,
    so the hash of such a row is computed from its raw bytes and the row is reported.
    """
    text_columns = ", ".join(f"{alias}{name}" for name in ("seq", *_FIELDS))
    blob_columns = ", ".join([f"{alias}seq"] + [conn.dialect.as_bytes(f"{alias}{name}") for name in _FIELDS])
    lower = len(params) - 2
    while True:
        try:
            cursor = conn.tuples(sql.format(text_columns), params)
            while rows := cursor.fetchmany(BATCH):
                yield rows
                params = (*params[:lower], rows[-1][0] + 1, params[-1])
            return
        except DecodeError:
            pass  # this batch holds a row that is not text: read it as bytes below
        rows = conn.execute(sql.format(blob_columns) + f" LIMIT {BATCH}", params).fetchall()
        if not rows:
            raise OperationalError(f"cannot read thought_records from seq {params[lower]} on")
        yield [tuple(_decode(value) for value in row) for row in rows]
        params = (*params[:lower], rows[-1][0] + 1, params[-1])


def _decode(value: object) -> object:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value
