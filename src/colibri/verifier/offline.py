"""`colibri verify [--db PATH]`: check a database file offline, read-only — the chain, every seal,
and the verifiable log (its stored tree against its entries, each entry re-derived from its record
or call row, so a raw edit of an `actions` row — the switchboard's audit store holds only those —
is found and its log index named), reported with its own time and rate. `--checkpoint` checks the
log alone (cli/verify_checkpoint.py); given with --db, both run.

Exit codes: 0 everything verifies, 1 any break (chain, seal or log), 2 the file cannot be used.
The summary goes to stdout; a progress bar goes to stderr when it is a terminal and the
file is large.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path
from typing import Never

from tqdm import tqdm

from colibri.core.database import Database
from colibri.core.errors import DomainError, StorageError
from colibri.domains.log.models import LogStatus
from colibri.domains.log.status import log_status
from colibri.domains.proofs.repository import sealed_sessions
from colibri.domains.proofs.seals import compare
from colibri.domains.trail.repository import read_head_or_genesis
from colibri.domains.trail.scan import Break, scan_range
from colibri.domains.trail.verify import Report, check_anchor, verify
from colibri.serving.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from colibri.storage.sqlite import SQLiteDatabase
from colibri.verifier import parallel
from colibri.verifier.rate import rate

# The command's exit codes, from the one set every command uses.
EXIT_VALID, EXIT_BROKEN, EXIT_UNUSABLE = EXIT_OK, EXIT_FAILED, EXIT_USAGE
WHOLE_CHAIN = "whole chain and every sealed session"
PROGRESS_MIN = 50_000  # records; smaller files finish before a bar would help
_TABLES = ("thought_records", "trail_head", "audit_sessions", "session_seals")


def run_verify(db_path: str, session_id: str | None) -> int:
    """Verify `db_path` (the whole chain and every seal, or one session); print; return the exit code."""
    path = Path(db_path)
    started = time.perf_counter()
    try:
        conn = _open(path)
    except StorageError as exc:
        print(f"colibri verify: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    log, log_seconds = None, 0.0
    try:
        if session_id is None:
            report, scope = _verify_all(conn, path), WHOLE_CHAIN
            log_started = time.perf_counter()  # the chain's time ends here: the log's is its own
            log = verify_log(conn, parallel=True)
            log_seconds = time.perf_counter() - log_started
        else:
            report, scope = (
                verify(conn, session_id=session_id),
                f"session {session_id} (and the chain it is linked into)",
            )
    except DomainError:  # the only one verify raises: SESSION_NOT_FOUND
        print(
            f"colibri verify: {path} has no audit session {session_id!r}; leave out --session to check "
            "the whole chain and every sealed session",
            file=sys.stderr,
        )
        return EXIT_UNUSABLE
    except StorageError as exc:
        print(f"colibri verify: cannot read {path}: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    finally:
        conn.close()
    print_summary(path, scope, report, time.perf_counter() - started - log_seconds, log, log_seconds)
    return EXIT_VALID if report.valid and (log is None or log.valid) else EXIT_BROKEN


def verify_log(db: Database, *, parallel: bool = False) -> LogStatus | None:
    """The verifiable log rechecked; None for a store whose log has not begun: older than the log,
    or written since without a program that keeps it (whose next start adopts what it holds)."""
    if db.execute(db.dialect.table_exists, ("log_meta",)).fetchone() is None:
        return None
    started = db.execute("SELECT adopted FROM log_meta WHERE id = 1").fetchone()
    if started is None or not started[0]:
        return None
    return log_status(db, parallel=parallel)


def _open(path: Path) -> SQLiteDatabase:
    if not path.is_file():
        raise StorageError(f"{path} does not exist or is not a file; pass the database with --db PATH")
    problem = parallel.permission_problem(path)
    if problem is not None:
        raise StorageError(problem)
    try:
        conn = parallel.open_readonly(path)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open {path} read-only ({exc})") from exc
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StorageError(f"{path} is not a readable SQLite database ({exc})") from exc
    missing = [name for name in _TABLES if name not in names]
    if missing:
        conn.close()
        raise StorageError(
            f"{path} is not a Colibri database, or one never migrated (missing tables: "
            f"{', '.join(missing)}); open it once with `colibri serve` in FULL mode"
        )
    return SQLiteDatabase(conn, path, readonly=True)


def _verify_all(conn: SQLiteDatabase, path: Path) -> Report:
    """Whole chain up to the anchor, plus the Merkle root of every sealed session, in one pass."""
    with conn.snapshot():
        head = read_head_or_genesis(conn)
        seals = sealed_sessions(conn)
        workers = parallel.worker_count(head.seq)
        with _progress_bar(head.seq) as bar:

            def advance(records: int) -> None:
                bar.update(records)

            if workers > 1:
                result = parallel.scan_parallel(path, (1, head.seq), seals, workers=workers, progress=advance)
            else:
                result = scan_range(conn, 1, head.seq, track=seals, progress=advance)
        check_anchor(conn, head, result)
        checks = [
            compare(conn, session_id, seal, result.leaves[session_id]) for session_id, seal in seals.items()
        ]
    return Report.of(result, checks)


def _progress_bar(total: int) -> tqdm[Never]:
    quiet = total < PROGRESS_MIN or not sys.stderr.isatty()
    return tqdm(total=total, unit="rec", unit_scale=True, file=sys.stderr, disable=quiet, desc="verifying")


def print_summary(  # noqa: PLR0917 - the parts of one report
    path: Path | str,
    scope: str,
    report: Report,
    seconds: float,
    log: LogStatus | None = None,
    log_seconds: float = 0.0,
) -> None:
    shown_rate = rate(report.checked, seconds, "records")
    sealed_bad = [seal for seal in report.seals if not seal.valid]
    head_label = "chain head:" if scope == WHOLE_CHAIN else "session head:"
    lines = [
        f"database:         {path} (opened read-only)",
        f"scope:            {scope}",
        f"records checked:  {report.checked:,} in {seconds:.2f} s{shown_rate}",
        f"{head_label:<18}{report.head_hash or '(no records)'}",
        f"sessions checked: {len(report.seals)} sealed root(s) recomputed, {len(sealed_bad)} mismatch(es)",
        f"first break:      {_describe(report.first_break)}",
    ]
    if report.breaks > 1:
        lines.append(f"breaks found:     {report.breaks}")
    lines += [
        f"seal mismatch:    session {seal.session_id}: sealed root {seal.sealed_root} over "
        f"{seal.sealed_leaf_count} leaves, recomputed {seal.computed_root} over {seal.computed_leaf_count}"
        for seal in sealed_bad
    ]
    lines += [
        f"tree damaged:     session {seal.session_id}: the stored Merkle tree no longer matches its records; "
        "merkle_root will refuse proofs for it"
        for seal in report.seals
        if not seal.stored_tree_intact
    ]
    if log is not None:
        lines.append(
            f"log entries:      {log.size:,} checked against their records and calls, and the tree, in"
            f" {log_seconds:.2f} s{rate(log.size, log_seconds, 'entries')}"
        )
        if log.first_difference is not None:
            difference = log.first_difference
            lines.append(f"log difference:   entry index {difference.index}: {difference.reason}")
        elif not log.tree_matches_entries:
            lines.append("log tree:         the stored tree no longer matches the entries")
    if not report.valid:
        verdict = "BROKEN — the records no longer match their hashes or seals"
    elif log is not None and not log.valid:
        verdict = "BROKEN — the log no longer matches the records and calls it logs"
    else:
        verdict = "VALID"
    lines.append(f"result:           {verdict}")
    print("\n".join(lines))


def _describe(brk: Break | None) -> str:
    if brk is None:
        return "none"
    return f"seq {brk.seq}: {brk.reason} (expected {brk.expected}, found {brk.found})"
