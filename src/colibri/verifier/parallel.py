"""Checking a large chain on every core: seq ranges scanned by worker processes, then merged.

Hashing is CPU-bound Python, so threads would share one core; processes do not. Each
worker opens the file read-only on its own (see `open_flags`). Records up to the anchored head never change,
so workers reading at slightly different moments still see the same records; anything
appended later lies beyond the range they were given.

Merging gives exactly what one sequential scan would: a range whose predecessor is missing
starts in step with its first record, and the hole is reported by the range before it
(whose scan must reach its own end).
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from collections.abc import Collection
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from colibri.domains.trail.scan import Progress, ScanResult, scan_range
from colibri.storage.sqlite import SQLiteDatabase

MIN_PER_WORKER = 100_000  # below this, starting processes costs more than it saves
RANGES_PER_WORKER = 6  # several ranges each, so progress moves and the cores finish together
READ_ONLY = "mode=ro"
IMMUTABLE = "mode=ro&immutable=1"
QUERY_ONLY = "mode=rw"  # plus PRAGMA query_only


def worker_count(records: int) -> int:
    """How many processes are worth starting for `records` records (1 means: scan in-process)."""
    cores = os.cpu_count() or 1
    return max(1, min(cores, records // MIN_PER_WORKER))


def scan_parallel(
    db_path: Path,
    seqs: tuple[int, int],
    track: Collection[str],
    *,
    workers: int,
    progress: Progress | None = None,
) -> ScanResult:
    """What `scan_range(conn, first, last, track=track)` returns for `seqs` = (first, last),
    computed by `workers` processes."""
    ranges = split(seqs[0], seqs[1], workers * RANGES_PER_WORKER)
    context = multiprocessing.get_context("spawn")  # no fork: the parent holds sqlite handles
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {
            pool.submit(scan_file_range, db_path, lo, hi, tuple(track)): i
            for i, (lo, hi) in enumerate(ranges)
        }
        results: list[ScanResult | None] = [None] * len(ranges)
        for future in as_completed(futures):
            result = future.result()
            results[futures[future]] = result
            if progress is not None:
                progress(result.checked)
    return merge([result for result in results if result is not None])


def scan_file_range(db_path: Path, first: int, last: int, track: tuple[str, ...]) -> ScanResult:
    """Worker entry point: one read-only connection, one range."""
    db = SQLiteDatabase(open_readonly(db_path), db_path, readonly=True)
    try:
        return scan_range(db, first, last, track=track)
    finally:
        db.close()


def open_readonly(db_path: Path) -> sqlite3.Connection:
    """A connection that cannot change the records, opened as `open_flags` decides."""
    flags = open_flags(db_path)
    conn = sqlite3.connect(f"{db_path.resolve().as_uri()}?{flags}", uri=True, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 10000")
    if flags == QUERY_ONLY:
        conn.execute("PRAGMA query_only = 1")
    return conn


def open_flags(db_path: Path) -> str:
    """The URI parameters to read `db_path` with, leaving nothing behind.

    - A -wal file exists: a writer is live, or one stopped without checkpointing. Its frames
      hold committed records, and only a shared-memory read (mode=ro) sees them; SQLite needs
      to write the -shm beside the file for that.
    - No -wal, and the file or its directory is not writable: immutable=1, so SQLite neither
      locks nor creates a -wal or -shm (mode=ro alone would try, and fail).
    - No -wal, everything writable: a normal connection made query_only. Unlike mode=ro it
      cleans up the -wal and -shm it opens when it closes, and unlike immutable=1 it stays
      correct if a server starts writing during the check.
    """
    if Path(f"{db_path}-wal").exists():
        return READ_ONLY
    if not writable(db_path):
        return IMMUTABLE
    return QUERY_ONLY


def writable(db_path: Path) -> bool:
    """Whether this user may write the file and create files beside it."""
    return os.access(db_path, os.W_OK) and os.access(db_path.resolve().parent, os.W_OK)


def permission_problem(db_path: Path) -> str | None:
    """Why this user cannot read `db_path` at all, in words, or None."""
    if not os.access(db_path, os.R_OK):
        return f"no permission to read {db_path}; run colibri verify as a user who can read it"
    if open_flags(db_path) == READ_ONLY and not writable(db_path):
        return (
            f"{db_path} has a -wal file (a server is running, or one stopped without cleaning up), and "
            f"reading its committed frames needs write access to {db_path.resolve().parent} for the "
            "-shm file; run colibri verify as a user who can write there, or stop the server (or open "
            "the file once with `colibri serve`) so the -wal is checkpointed"
        )
    return None


def split(first: int, last: int, parts: int) -> list[tuple[int, int]]:
    """`first`..`last` cut into at most `parts` consecutive, non-empty, inclusive ranges."""
    total = last - first + 1
    if total <= 0:
        return []
    parts = max(1, min(parts, total))
    size, extra = divmod(total, parts)
    ranges, lo = [], first
    for i in range(parts):
        hi = lo + size - 1 + (1 if i < extra else 0)
        ranges.append((lo, hi))
        lo = hi + 1
    return ranges


def merge(results: list[ScanResult]) -> ScanResult:
    """Consecutive range results → one result, as if one scan had covered them all."""
    merged = ScanResult()
    for result in results:
        merged.checked += result.checked
        merged.breaks += result.breaks
        if result.first_break is not None and (
            merged.first_break is None or result.first_break.seq < merged.first_break.seq
        ):
            merged.first_break = result.first_break
        if result.last_seq is not None:
            merged.last_seq, merged.last_hash = result.last_seq, result.last_hash
        for session_id, leaves in result.leaves.items():
            merged.leaves.setdefault(session_id, []).extend(leaves)
    if results:
        merged.predecessor_missing = results[0].predecessor_missing
    return merged
