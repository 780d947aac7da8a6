"""Checking a chain across worker processes gives exactly what one sequential scan gives."""

from __future__ import annotations

import itertools
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from colibri.domains.proofs.repository import sealed_sessions
from colibri.domains.trail.scan import ScanResult, scan_range
from colibri.storage import Database
from colibri.verifier import parallel
from colibri.verifier.offline import run_verify
from tests.domains.trail.helpers import build_chain, raw_connection

# The offline verifier reads a SQLite file itself (PostgreSQL stores verify with --db-url).
pytestmark = pytest.mark.sqlite_only


def test_split_covers_the_range_in_consecutive_non_empty_parts() -> None:
    assert parallel.split(1, 10, 3) == [(1, 4), (5, 7), (8, 10)]
    assert parallel.split(5, 6, 8) == [(5, 5), (6, 6)]
    assert parallel.split(3, 2, 4) == []
    for first, last, parts in ((1, 1000, 7), (17, 17, 1), (1, 12, 12)):
        ranges = parallel.split(first, last, parts)
        assert ranges[0][0] == first and ranges[-1][1] == last
        assert all(hi + 1 == lo for (_, hi), (lo, _) in itertools.pairwise(ranges))


def test_worker_count_starts_processes_only_for_large_chains(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert parallel.worker_count(10) == 1
    assert parallel.worker_count(2 * parallel.MIN_PER_WORKER - 1) == 1
    assert parallel.worker_count(2 * parallel.MIN_PER_WORKER) == 2
    assert parallel.worker_count(10_000_000) == 4  # capped at the cores
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert parallel.worker_count(10_000_000) == 1


def _access(monkeypatch: pytest.MonkeyPatch, unwritable: set[Path]) -> None:
    """os.access as a user who cannot write `unwritable` (the tests run as root)."""
    real = os.access

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        if mode & os.W_OK and Path(path).resolve() in unwritable:
            return False
        return real(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)


def test_open_flags_pick_immutable_only_without_a_wal_and_without_write_access(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f.db"
    path.write_bytes(b"")
    assert parallel.open_flags(path) == parallel.QUERY_ONLY
    _access(monkeypatch, {tmp_path.resolve()})  # a directory it cannot write
    assert parallel.open_flags(path) == parallel.IMMUTABLE
    assert parallel.permission_problem(path) is None
    _access(monkeypatch, {path.resolve()})  # a file it cannot write
    assert parallel.open_flags(path) == parallel.IMMUTABLE
    Path(f"{path}-wal").write_bytes(b"")  # a writer is live or crashed: its frames must be read
    assert parallel.open_flags(path) == parallel.READ_ONLY
    problem = parallel.permission_problem(path)
    assert problem is not None and "-wal" in problem and "write access" in problem
    monkeypatch.undo()
    assert parallel.open_flags(path) == parallel.READ_ONLY and parallel.permission_problem(path) is None


def test_verify_reads_an_unwritable_closed_file_and_leaves_nothing_beside_it(
    fresh_db: Database, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    build_chain(fresh_db, 30, session_count=2, seal=1)
    path = fresh_db.path
    fresh_db.close()
    before = sorted(p.name for p in path.parent.iterdir())
    assert not Path(f"{path}-wal").exists()
    assert run_verify(str(path), None) == 0  # writable: query_only, cleaned up on close
    assert sorted(p.name for p in path.parent.iterdir()) == before
    _access(monkeypatch, {path.parent.resolve()})
    assert parallel.open_flags(path) == parallel.IMMUTABLE
    assert run_verify(str(path), None) == 0
    assert sorted(p.name for p in path.parent.iterdir()) == before
    conn = parallel.open_readonly(path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM thought_records")
    finally:
        conn.close()
    assert "result:           VALID" in capsys.readouterr().out


def test_a_query_only_connection_refuses_writes(fresh_db: Database) -> None:
    build_chain(fresh_db, 3, session_count=1)
    conn = parallel.open_readonly(fresh_db.path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM thought_records")
    finally:
        conn.close()
    assert fresh_db.execute("SELECT count(*) FROM thought_records").fetchone()[0] == 3


def _same(a: ScanResult, b: ScanResult) -> None:
    assert (a.checked, a.breaks, a.first_break, a.last_seq, a.last_hash) == (
        b.checked,
        b.breaks,
        b.first_break,
        b.last_seq,
        b.last_hash,
    )
    assert a.leaves == b.leaves


def test_parallel_and_sequential_scans_agree_on_intact_and_damaged_chains(fresh_db: Database) -> None:
    build_chain(fresh_db, 2400, session_count=4, seal=2)
    path, conn = fresh_db.path, fresh_db
    sealed = sealed_sessions(conn)
    # 2 workers x RANGES_PER_WORKER ranges: boundaries every 200 seqs.
    _same(parallel.scan_parallel(path, (1, 2400), sealed, workers=2), scan_range(conn, 1, 2400, track=sealed))

    raw = raw_connection(path)
    raw.execute("DELETE FROM thought_records WHERE seq BETWEEN 399 AND 402")  # a hole across a boundary
    raw.execute("DELETE FROM thought_records WHERE seq BETWEEN 1001 AND 1200")  # a whole range missing
    raw.execute("UPDATE thought_records SET content = 'edited' WHERE seq = 1700")
    raw.close()
    expected = scan_range(conn, 1, 2400, track=sealed)
    got = parallel.scan_parallel(path, (1, 2400), sealed, workers=2)
    _same(got, expected)
    assert got.first_break is not None and (got.first_break.seq, got.first_break.found) == (399, 403)
    assert got.breaks == 3


def test_colibri_verify_uses_the_workers_for_large_files(
    fresh_db: Database, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    build_chain(fresh_db, 600, session_count=3, seal=2)
    monkeypatch.setattr(parallel, "MIN_PER_WORKER", 100)
    calls: list[int] = []
    original = parallel.scan_parallel

    def counted(*args: Any, **kwargs: Any) -> ScanResult:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(parallel, "scan_parallel", counted)
    assert run_verify(str(fresh_db.path), None) == 0
    out = capsys.readouterr().out
    assert "records checked:  600 " in out and "2 sealed root(s) recomputed, 0 mismatch(es)" in out
    assert calls == ([1] if parallel.worker_count(600) > 1 else [])
