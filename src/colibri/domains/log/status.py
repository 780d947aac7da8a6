"""Rechecking the log for audit_verify_chain: the fast pass, and the exact one when anything differs."""

from __future__ import annotations

from colibri.core.database import Database

# Modules, not names: this loads while the trail (which scan.py reads) may still be loading.
from colibri.domains.log import fastcheck, scan, tree
from colibri.domains.log.models import LogDifference, LogStatus


def log_status(db: Database, *, parallel: bool = False) -> LogStatus:
    """Rebuild the log's tree from its entries and each entry from its row; when anything
    differs, a second, exact pass finds the first entry that does. `parallel` lets the fast pass
    spread a large SQLite log over worker processes (a command, not a server answering a call)."""
    with db.snapshot() as conn:
        size = tree.size(conn)
        fast = fastcheck.check(db.path, conn, size, frozenset(), parallel=parallel)
        if fast.ok:
            return LogStatus(
                size=size,
                root=fast.roots[size].hex(),
                tree_matches_entries=True,
                entries_match_rows=True,
                first_difference=None,
            )
        result = scan.scan(conn)
    first = result.first_difference
    return LogStatus(
        size=result.size,
        root=result.root.hex(),
        tree_matches_entries=result.tree_matches_entries,
        entries_match_rows=first is None,
        first_difference=None if first is None else LogDifference(index=first.index, reason=first.reason),
    )
