"""The fast pass over the log: does the stored tree match the entries (and, with `rows`, every
entry its row), and what are the roots at the sizes asked for — on every core, in aligned ranges.
`colibri verify --checkpoint` asks without rows (SPEC §25: it checks the log); `colibri verify
--db` and audit_verify_chain ask with them.

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
import sys
import threading
from array import array
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter, methodcaller
from pathlib import Path
from typing import cast

from colibri.core.database import Connection
from colibri.core.merkle import EMPTY_ROOT, build_levels, node_hash
from colibri.domains.log import rfc9162
from colibri.domains.log.batch import action_entries, record_entries
from colibri.domains.log.entries import LOCAL_PRINCIPAL
from colibri.domains.log.leaves import entry_leaves
from colibri.domains.log.nodecheck import chunk_nodes_match, upper_nodes_match
from colibri.domains.log.ranges import RangeCheck, all_logged, row_counts
from colibri.storage import open_database

CHUNK = 1 << 14
MIN_PER_WORKER = 200_000
_sha256 = hashlib.sha256
_digest = methodcaller("digest")
_first, _third = itemgetter(0), itemgetter(2)
_LEAF = b"\x00"
Row = tuple[object, ...]


@dataclass(frozen=True, slots=True)
class FastResult:
    """All entries match their rows, every row is logged and every stored node is the one the
    entries make (`ok`), with the roots asked for."""

    ok: bool
    size: int
    roots: dict[int, bytes]


@contextmanager
def worker_pool() -> Iterator[Executor | None]:
    """Worker processes for `check`, started at once: enter this before the process opens any
    database connection. On Linux, in a process with no other thread, they are forked, which
    spares each the ~0.25 s of importing Colibri again that spawn costs, and is safe then
    because no SQLite state exists yet to be inherited. None on a single core."""
    count = os.cpu_count() or 1
    if count < 2:
        yield None
        return
    fork = sys.platform == "linux" and threading.active_count() == 1
    context = multiprocessing.get_context("fork" if fork else "spawn")
    with ProcessPoolExecutor(max_workers=count, mp_context=context) as pool:
        pool.submit(int).result()  # forks every worker now, before the caller opens the database
        yield pool


def check(
    db_path: Path,
    conn: Connection,
    size: int,
    sizes: frozenset[int],
    *,
    parallel: bool = True,
    pool: Executor | None = None,
    rows: bool = True,
) -> FastResult:
    """Check entries 0..size-1 (the caller holds a snapshot on `conn` and knows `size`);
    `parallel=False` keeps to this process (a server answering a tool call); `pool` is one
    from `worker_pool` (None: spawn workers here when the log is large enough); `rows=False`
    checks the entries and the tree alone, reading no record or call row."""
    sizes = frozenset({*sizes, size})
    bounds = [(lo, min(lo + step, size)) for step in [_step(size)] for lo in range(0, size, step)]
    workers = _workers(size) if parallel else 1
    if workers > 1 and pool is not None:
        futures = [pool.submit(check_file_range, db_path, lo, hi, sizes, CHUNK, rows) for lo, hi in bounds]
        counts = row_counts(conn) if rows else None  # while the workers work: this process would wait
        parts = [future.result() for future in futures]
    elif workers > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as spawned:
            futures = [
                spawned.submit(check_file_range, db_path, lo, hi, sizes, CHUNK, rows) for lo, hi in bounds
            ]
            counts = row_counts(conn) if rows else None
            parts = [future.result() for future in futures]
    else:
        parts = [check_range(conn, lo, hi, sizes, CHUNK, rows) for lo, hi in bounds]
        counts = row_counts(conn) if rows else None
    if not (all(part.ok for part in parts) and (counts is None or all_logged(counts, parts))):
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


def check_file_range(  # noqa: PLR0917 - a worker's arguments, pickled positionally
    db_path: Path, lo: int, hi: int, sizes: frozenset[int], chunk: int, rows: bool = True
) -> RangeCheck:
    """Worker entry point: its own read-only connection, one range."""
    db = open_database(Path(db_path), readonly=True)
    try:
        with db.snapshot() as conn:
            return check_range(conn, lo, hi, sizes, chunk, rows)
    finally:
        db.close()


def check_range(  # noqa: PLR0917 - a worker's arguments, positional as check_file_range's
    conn: Connection, lo: int, hi: int, sizes: frozenset[int], chunk: int, rows: bool = True
) -> RangeCheck:
    """Entries lo..hi-1 (against their rows when `rows`), and their chunk roots."""
    result = RangeCheck(lo, hi)
    leaves = _row_checked_leaves(conn, result) if rows else entry_leaves(conn, lo, hi)
    if leaves is None:
        result.ok = False
        return result
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


def _row_checked_leaves(conn: Connection, result: RangeCheck) -> list[bytes] | None:
    """The leaves of entries result.lo..hi-1 when each still matches its row; None otherwise."""
    # idx is the INTEGER PRIMARY KEY: hi - lo distinct rows in [lo, hi) are all of them.
    rows = conn.tuples(
        "SELECT CASE kind WHEN 'record' THEN 0 WHEN 'action' THEN 1 END, ref, entry_hash FROM log_entries"
        " WHERE idx >= ? AND idx < ? ORDER BY idx",
        (result.lo, result.hi),
    ).fetchall()
    if len(rows) != result.hi - result.lo:
        return None
    kinds = list(map(_first, rows))
    if None in kinds:
        return None
    entries = list(map(_third, rows))
    if set(map(type, entries)) != {bytes}:  # a hash stored as something else
        return None
    if not (
        _records_ok(conn, result, rows, kinds, entries) and _actions_ok(conn, result, rows, kinds, entries)
    ):
        return None
    return leaf_hashes(entries)


def _prefix_root(levels: list[list[bytes]], count: int) -> bytes:
    def subtree(start: int, size: int) -> bytes:
        return levels[size.bit_length() - 1][start >> (size.bit_length() - 1)]

    return rfc9162.range_hash(subtree, 0, count)


def _records_ok(
    conn: Connection, result: RangeCheck, rows: list[Row], kinds: list[int], entries: list[bytes]
) -> bool:
    """Record entries name seq first..last in order, and each is its row's hash."""
    if 0 not in kinds:
        return True
    refs = [row[1] for row in rows if row[0] == 0]
    first, last = refs[0], refs[-1]
    if type(first) is not int or type(last) is not int or refs != list(range(first, last + 1)):
        return False
    result.first_record, result.last_record, result.records = first, last, len(refs)
    stored = conn.tuples(
        "SELECT seq, session_id, kind, content, task_id, agent_id, created_at, prev_hash"
        " FROM thought_records WHERE seq BETWEEN ? AND ? ORDER BY seq",
        (first, last),
    ).fetchall()
    wanted = (
        entries if len(refs) == len(entries) else [e for k, e in zip(kinds, entries, strict=True) if k == 0]
    )
    return len(stored) == len(refs) and record_entries(stored) == wanted


def _actions_ok(
    conn: Connection, result: RangeCheck, rows: list[Row], kinds: list[int], entries: list[bytes]
) -> bool:
    """Each action entry is the entry of the finished action row it names."""
    if 1 not in kinds:
        return True
    named = [row[1] for row in rows if row[0] == 1]
    if set(map(type, named)) != {int}:
        return False
    refs = cast("list[int]", named)
    numbers = array("q", refs)
    result.action_refs = numbers.tobytes()
    wanted = _of_kind(1, kinds, entries)
    columns = {row[0] for row in conn.tuples(conn.dialect.table_columns, ("actions",))}
    principal = "principal" if "principal" in columns else f"'{LOCAL_PRINCIPAL}'"
    stored = conn.tuples(
        f"SELECT sequence_no, correlation_id, tool, {principal}, arguments, outcome, result_hash, started_at,"
        " duration_ms FROM actions WHERE sequence_no BETWEEN ? AND ? AND outcome != 'running'"
        " ORDER BY sequence_no",
        (min(numbers), max(numbers)),
    ).fetchall()
    made = action_entries(stored)
    stored_numbers = list(map(_first, stored))
    if stored_numbers == refs:  # logged in sequence_no order, as one process writes them
        return made == wanted
    by_number = dict(zip(stored_numbers, made, strict=True))
    return all(by_number.get(ref) == entry for ref, entry in zip(refs, wanted, strict=True))


def _of_kind(kind: int, kinds: list[int], entries: list[bytes]) -> list[bytes]:
    return [entry for k, entry in zip(kinds, entries, strict=True) if k == kind]


def leaf_hashes(entries: list[bytes]) -> list[bytes]:
    """SHA-256(0x00 ‖ entry) of each entry (RFC 9162 leaves), mapped in C."""
    return list(map(_digest, map(_sha256, map(_LEAF.__add__, entries))))
