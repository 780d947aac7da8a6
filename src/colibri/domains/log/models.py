"""The log's part of audit_verify_chain's answer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pydantic import BaseModel, Field

from colibri.domains.log import fastcheck, tree
from colibri.domains.log.scan import scan
from colibri.storage.database import snapshot


class LogDifference(BaseModel):
    """The first log entry that no longer matches the row it logs."""

    index: int = Field(ge=0, description="0-based index of the entry in the verifiable log.")
    reason: str


class LogStatus(BaseModel):
    """The verifiable log rechecked: the stored tree against the entries, the entries against the rows."""

    size: int = Field(ge=0, description="Entries in the log (thought records and finished calls).")
    root: str = Field(description="RFC 9162 root over every entry, recomputed now (lowercase hex).")
    tree_matches_entries: bool = Field(
        description="Whether every stored tree node (what checkpoints and proofs are built from) is the one "
        "the entries make."
    )
    entries_match_rows: bool = Field(
        description="Whether every entry still matches its thought record or audit row, and every record and "
        "finished call is logged."
    )
    first_difference: LogDifference | None = Field(
        description="The first entry that differs from its row; null when none does."
    )

    @property
    def valid(self) -> bool:
        return self.tree_matches_entries and self.entries_match_rows


def log_status(conn: sqlite3.Connection, db_path: Path) -> LogStatus:
    """Rebuild the log's tree from its entries and each entry from its row; when anything
    differs, a second, exact pass finds the first entry that does."""
    with snapshot(conn):
        size = tree.size(conn)
        fast = fastcheck.check(db_path, conn, size, frozenset(), parallel=False)
        if fast.ok:
            return LogStatus(
                size=size,
                root=fast.roots[size].hex(),
                tree_matches_entries=True,
                entries_match_rows=True,
                first_difference=None,
            )
        result = scan(conn)
    first = result.first_difference
    return LogStatus(
        size=result.size,
        root=result.root.hex(),
        tree_matches_entries=result.tree_matches_entries,
        entries_match_rows=first is None,
        first_difference=None if first is None else LogDifference(index=first.index, reason=first.reason),
    )
