"""Verification through the storage interface, for any backend (`colibri verify --db-url`).

The offline verifier (offline.py) reads a SQLite file with its own read-only connections and
workers; a PostgreSQL store is read through one read-only connection and one snapshot instead.
"""

from __future__ import annotations

import sys
import time

from colibri.core.database import Database
from colibri.core.errors import DomainError, StorageError
from colibri.domains.proofs.repository import sealed_sessions
from colibri.domains.proofs.seals import compare
from colibri.domains.trail.repository import read_head_or_genesis
from colibri.domains.trail.scan import scan_range
from colibri.domains.trail.verify import Report, check_anchor, verify
from colibri.serving.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from colibri.storage import open_database
from colibri.verifier.offline import WHOLE_CHAIN, print_summary, verify_log


def verify_store(db: Database) -> Report:
    """The whole chain up to its anchor and every sealed session's root, in one snapshot."""
    with db.snapshot() as conn:
        head = read_head_or_genesis(conn)
        seals = sealed_sessions(conn)
        result = scan_range(conn, 1, head.seq, track=seals)
        check_anchor(conn, head, result)
        checks = [
            compare(conn, session_id, seal, result.leaves[session_id]) for session_id, seal in seals.items()
        ]
    return Report.of(result, checks)


def run_verify_url(url: str, session_id: str | None) -> int:
    started = time.perf_counter()
    try:
        db = open_database(url, readonly=True)
    except StorageError as exc:
        print(f"colibri verify: {exc}", file=sys.stderr)
        return EXIT_USAGE
    log, log_seconds = None, 0.0
    try:
        if session_id is None:
            report, scope = verify_store(db), WHOLE_CHAIN
            log_started = time.perf_counter()  # the chain's time ends here: the log's is its own
            log = verify_log(db)
            log_seconds = time.perf_counter() - log_started
        else:
            report = verify(db, session_id=session_id)
            scope = f"session {session_id} (and the chain it is linked into)"
    except DomainError:
        print(f"colibri verify: {db} has no audit session {session_id!r}", file=sys.stderr)
        return EXIT_USAGE
    except StorageError as exc:
        print(f"colibri verify: cannot read {db}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        db.close()
    print_summary(str(db), scope, report, time.perf_counter() - started - log_seconds, log, log_seconds)
    return EXIT_OK if report.valid and (log is None or log.valid) else EXIT_FAILED
