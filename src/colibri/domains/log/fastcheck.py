"""The fast path of `colibri verify --checkpoint`: does every entry still match its row and
the stored tree the entries, and what are the roots at the sizes asked for — on every core,
in aligned ranges.

It only answers yes or no (and the roots). When anything is off, the caller runs the exact
one-pass scan (scan.py), which names the first entry that differs; a tampered file is rare
and its report is worth the slower pass.

A range [lo, hi) starts at a multiple of CHUNK, so each full chunk is a complete subtree;
the parent folds the chunk roots into the root of any size.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from array import array
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from json.encoder import encode_basestring as _q
from pathlib import Path

from colibri.core.database import Connection
from colibri.core.merkle import EMPTY_ROOT, build_levels, node_hash
from colibri.domains.log import rfc9162
from colibri.domains.log.entries import LOCAL_PRINCIPAL, es_number, stored_action_entry
from colibri.domains.log.nodecheck import chunk_nodes_match, upper_nodes_match
from colibri.domains.log.tree import ACTION, RECORD
from colibri.domains.trail.api import record_json, stored_record_hash
from colibri.storage import open_database

CHUNK = 1 << 14
MIN_PER_WORKER = 200_000
_sha256 = hashlib.sha256


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
class FastResult:
    """All entries match their rows, every row is logged and every stored node is the one the
    entries make (`ok`), with the roots asked for."""

    ok: bool
    size: int
    roots: dict[int, bytes]


def check(
    db_path: Path, conn: Connection, size: int, sizes: frozenset[int], *, parallel: bool = True
) -> FastResult:
    """Check entries 0..size-1 (the caller holds a snapshot on `conn` and knows `size`);
    `parallel=False` keeps to this process (a server answering a tool call)."""
    sizes = frozenset({*sizes, size})
    bounds = [(lo, min(lo + step, size)) for step in [_step(size)] for lo in range(0, size, step)]
    workers = _workers(size) if parallel else 1
    if workers > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = [pool.submit(check_file_range, db_path, lo, hi, sizes, CHUNK) for lo, hi in bounds]
            parts = [future.result() for future in futures]
    else:
        parts = [check_range(conn, lo, hi, sizes, CHUNK) for lo, hi in bounds]
    if not (all(part.ok for part in parts) and _all_logged(conn, parts)):
        return FastResult(False, size, {})
    chunk_roots = [root for part in parts for root in part.chunk_roots]
    upper = {key: digest for part in parts for key, digest in part.upper_nodes.items()}
    if not upper_nodes_match(chunk_roots, CHUNK, upper):
        return FastResult(False, size, {})
    partials = {s: root for part in parts for s, root in part.partial_roots.items()}
    roots = {s: _root(chunk_roots, partials, s) for s in sizes if 0 <= s <= size}
    return FastResult(True, size, roots)


def _step(size: int) -> int:
    parts = max(1, _workers(size) * 4)
    chunks = -(-size // CHUNK)
    return max(1, -(-chunks // parts)) * CHUNK


def _workers(size: int) -> int:
    return max(1, min(os.cpu_count() or 1, size // MIN_PER_WORKER))


def _all_logged(conn: Connection, parts: list[RangeCheck]) -> bool:
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
    stored = conn.execute("SELECT count(*), coalesce(max(seq), 0) FROM thought_records").fetchone()
    if (records, expected - 1) != (stored[0], stored[1]):
        return False
    refs: array[int] = array("q")
    for part in parts:
        refs.frombytes(part.action_refs)
    finished = conn.execute("SELECT count(*) FROM actions WHERE outcome != 'running'").fetchone()[0]
    return bool(len(refs) == finished == len(set(refs)))


def _root(chunk_roots: list[bytes], partials: dict[int, bytes], size: int) -> bytes:
    """MTH of the first `size` entries: its chunk-sized subtrees from the chunk roots, then the
    rest of the last chunk."""
    if size == 0:
        return EMPTY_ROOT
    full = size // CHUNK

    def subtree(start: int, count: int) -> bytes:
        level = [chunk_roots[i] for i in range(start // CHUNK, (start + count) // CHUNK)]
        while len(level) > 1:
            level = [node_hash(level[i], level[i + 1]) for i in range(0, len(level), 2)]
        return level[0]

    if size % CHUNK == 0:
        return rfc9162.range_hash(subtree, 0, size)
    parts = []
    start, remaining = 0, full * CHUNK
    while remaining:
        count = 1 << (remaining.bit_length() - 1)
        parts.append(subtree(start, count))
        start += count
        remaining -= count
    digest = partials[size]
    for part in reversed(parts):
        digest = node_hash(part, digest)
    return digest


def check_file_range(db_path: Path, lo: int, hi: int, sizes: frozenset[int], chunk: int) -> RangeCheck:
    """Worker entry point: its own read-only connection, one range."""
    db = open_database(Path(db_path), readonly=True)
    try:
        with db.snapshot() as conn:
            return check_range(conn, lo, hi, sizes, chunk)
    finally:
        db.close()


def check_range(conn: Connection, lo: int, hi: int, sizes: frozenset[int], chunk: int) -> RangeCheck:
    """Entries lo..hi-1 against their rows, and their chunk roots."""
    result = RangeCheck(lo, hi)
    rows = conn.tuples(
        "SELECT idx, kind, ref, entry_hash FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx", (lo, hi)
    ).fetchall()
    if len(rows) != hi - lo or (rows and (rows[0][0] != lo or rows[-1][0] != hi - 1)):
        result.ok = False
        return result
    entries = [bytes(row[3]) for row in rows]
    record_refs = [row[2] for row in rows if row[1] == RECORD]
    action_rows = [(row[2], i) for i, row in enumerate(rows) if row[1] == ACTION]
    if len(record_refs) + len(action_rows) != len(rows):
        result.ok = False
        return result
    if record_refs:
        result.first_record, result.last_record, result.records = (
            record_refs[0],
            record_refs[-1],
            len(record_refs),
        )
        if record_refs[-1] - record_refs[0] + 1 != len(record_refs) or not _records_match(
            conn,
            record_refs[0],
            record_refs[-1],
            [entries[i] for i, row in enumerate(rows) if row[1] == RECORD],
        ):
            result.ok = False
            return result
    if action_rows:
        refs = array("q", [ref for ref, _ in action_rows])
        result.action_refs = refs.tobytes()
        if not _actions_match(conn, min(refs), max(refs), [(ref, entries[i]) for ref, i in action_rows]):
            result.ok = False
            return result
    leaves = [_sha256(b"\x00" + entry).digest() for entry in entries]
    for start in range(0, len(leaves), chunk):
        part = leaves[start : start + chunk]
        levels = build_levels(part)
        if not chunk_nodes_match(conn, lo + start, levels, result.upper_nodes):
            result.ok = False
            return result
        if len(part) == chunk:
            result.chunk_roots.append(levels[-1][0])
        chunk_lo = lo + start
        for size in sizes:
            if chunk_lo < size <= chunk_lo + len(part) and size % chunk:
                result.partial_roots[size] = _prefix_root(levels, size - chunk_lo)
    return result


def _prefix_root(levels: list[list[bytes]], count: int) -> bytes:
    def subtree(start: int, size: int) -> bytes:
        return levels[size.bit_length() - 1][start >> (size.bit_length() - 1)]

    return rfc9162.range_hash(subtree, 0, count)


def _records_match(conn: Connection, first: int, last: int, entries: list[bytes]) -> bool:
    rows = conn.tuples(
        "SELECT seq, session_id, kind, content, task_id, agent_id, created_at, prev_hash"
        " FROM thought_records WHERE seq BETWEEN ? AND ? ORDER BY seq",
        (first, last),
    ).fetchall()
    if len(rows) != len(entries):
        return False
    sha = _sha256
    for row, entry in zip(rows, entries, strict=True):
        try:
            digest = sha(record_json(*row).encode()).digest()
        except (TypeError, UnicodeEncodeError):  # a value of the wrong type: only tampering does that
            digest = bytes.fromhex(stored_record_hash(*row))
        if digest != entry:
            return False
    return True


def _actions_match(conn: Connection, first: int, last: int, wanted: list[tuple[int, bytes]]) -> bool:
    columns = {row[0] for row in conn.tuples(conn.dialect.table_columns, ("actions",))}
    principal = "principal" if "principal" in columns else f"'{LOCAL_PRINCIPAL}'"
    rows = conn.tuples(
        f"SELECT sequence_no, correlation_id, tool, {principal}, arguments, outcome, result_hash, started_at,"
        " duration_ms FROM actions WHERE sequence_no BETWEEN ? AND ? AND outcome != 'running'",
        (first, last),
    ).fetchall()
    by_number = {row[0]: row for row in rows}
    for ref, entry in wanted:
        row = by_number.get(ref)
        if row is None or _action_entry(row) != entry:
            return False
    return True


def _action_entry(row: tuple[object, ...]) -> bytes:
    """The entry of a stored action row; the common, well-typed row takes a short way."""
    number, correlation_id, tool, principal, arguments, outcome, result, started_at, duration = row
    if (
        type(number) is int
        and type(arguments) is str
        and type(duration) is float
        and type(correlation_id) is str
        and type(tool) is str
        and type(principal) is str
        and type(outcome) is str
        and type(started_at) is str
        and (result is None or type(result) is str)
    ):
        text = repr(duration)
        if "e" in text or text.endswith(".0") or "inf" in text or "nan" in text:
            text = es_number(duration)
        json = (
            f'{{"arguments_sha256":"{_sha256(arguments.encode()).hexdigest()}","correlation_id":{_q(correlation_id)},'
            f'"duration_ms":{text},"outcome":{_q(outcome)},"principal":{_q(principal)},'
            f'"result_sha256":{"null" if result is None else _q(result)},"sequence_no":{number},'
            f'"started_at":{_q(started_at)},"tool":{_q(tool)},"type":"action"}}'
        )
        return _sha256(json.encode()).digest()
    return stored_action_entry(*row)
