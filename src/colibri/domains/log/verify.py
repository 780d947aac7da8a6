"""Verifying a database's log against a signed checkpoint kept elsewhere (SPEC §11).

Checked, in this order: the note's signature by the verifier key; its origin is this log's;
the log has at least the checkpoint's size; the root of the first `size` entries is the
signed root; the stored tree proves the current log consistent with the checkpoint (RFC
9162 §2.1.4); every entry still matches the record or action row it logs, and every
record and finished action is logged. The first entry index that differs is named.

When the entries were rewritten together with their rows, nothing inside the file can say
which entry changed; the checkpoints stored in the database that still verify under the
key narrow it down: entries below the largest such checkpoint whose root still matches
are unchanged.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, field

from colibri.core.database import Connection, Database
from colibri.domains.log import fastcheck, rfc9162, store, tree
from colibri.domains.log.checkpoint import Checkpoint, open_checkpoint
from colibri.domains.log.notary import default_origin
from colibri.domains.log.note import NoteError, Verifier
from colibri.domains.log.scan import ScanResult, scan


@dataclass(slots=True)
class CheckpointReport:
    """What `verify --checkpoint` found; `first_index` is the first entry that differs."""

    checkpoint: Checkpoint
    log_size: int = 0
    problems: list[str] = field(default_factory=list)
    first_index: int | None = None

    @property
    def valid(self) -> bool:
        return not self.problems

    def fail(self, problem: str, index: int | None = None) -> None:
        self.problems.append(problem)
        if index is not None and (self.first_index is None or index < self.first_index):
            self.first_index = index


def verify_against(
    db: Database,
    note: str,
    verifier: Verifier,
    origin: str | None = None,
    pool: Executor | None = None,
) -> CheckpointReport:
    """Verify the log of the database `db` against the checkpoint `note`.

    Raises NoteError when the note does not verify under the key (nothing else can be said
    then). `origin` is the expected origin (None: `colibri/<database id>`); `pool` as for
    fastcheck.check.
    """
    checkpoint = open_checkpoint(note, verifier)
    with db.snapshot() as conn:
        report = CheckpointReport(checkpoint)
        expected_origin = origin or default_origin(conn)
        if checkpoint.origin != expected_origin:
            report.fail(
                f"the checkpoint is for log {checkpoint.origin!r}, this database's log is {expected_origin!r}"
                " (set COLIBRI_LOG_ORIGIN as the server had it)"
            )
            return report
        stored = _stored_signed(conn, verifier, checkpoint.origin)
        sizes = frozenset({checkpoint.size, *stored})
        size = tree.size(conn)
        # The parallel pass reads SQLite files by path; another store is checked over its connection.
        on_file = db.dialect.name == "sqlite"
        fast = fastcheck.check(db.path, conn, size, sizes, parallel=on_file, pool=pool if on_file else None)
        report.log_size = size
        if fast.ok:
            _check_prefix(conn, report, size, fast.roots, None, stored)
            _check_stored_root(conn, report, size, fast.roots[size])
            return report
        # Something differs: the exact pass names the first entry that does.
        result = scan(conn, sizes)
        report.log_size = result.size
        _check_prefix(conn, report, result.size, {**result.roots, result.size: result.root}, result, stored)
        if result.first_difference is not None:
            report.fail(result.first_difference.reason, result.first_difference.index)
        if not result.tree_matches_entries:
            where = result.first_tree_mismatch
            report.fail(
                "the stored tree no longer matches the entries"
                + ("" if where is None else f" (first at entry {where})")
            )
    return report


def _check_stored_root(conn: Connection, report: CheckpointReport, size: int, root: bytes) -> None:
    """The stored tree that checkpoints and proofs are made from must give the entries' root."""
    try:
        stored_root = tree.root(conn, size)
    except LookupError as exc:
        report.fail(f"the stored tree is incomplete: {exc}")
        return
    if stored_root != root:
        report.fail("the stored tree no longer matches the entries (its root differs from theirs)")


def _check_prefix(  # noqa: PLR0917 - the pieces of one verification
    conn: Connection,
    report: CheckpointReport,
    size: int,
    roots: dict[int, bytes],
    result: ScanResult | None,
    stored: dict[int, bytes],
) -> None:
    checkpoint = report.checkpoint
    if size < checkpoint.size:
        report.fail(
            f"the log has {size} entries, fewer than the checkpoint's {checkpoint.size}: entries were"
            " removed",
            size,
        )
        return
    if checkpoint.size and roots.get(checkpoint.size) != checkpoint.root:
        proven = max(
            (s for s, root in stored.items() if s <= checkpoint.size and roots.get(s) == root),
            default=0,
        )
        located = (
            result is not None
            and result.first_difference is not None
            and result.first_difference.index < checkpoint.size
        )
        report.fail(
            f"the root of the log's first {checkpoint.size} entries is not the checkpoint's: history was "
            "rewritten"
            + (
                ""
                if located
                else f"; entries 0..{proven - 1} still match a signed checkpoint, so the first difference "
                f"is at an index from {proven} to {checkpoint.size - 1}"
            ),
            None if located else proven,
        )
        return
    try:
        proof = tree.consistency_proof(conn, checkpoint.size, size) if checkpoint.size else []
    except LookupError as exc:
        report.fail(f"the stored tree cannot prove consistency: {exc}")
        return
    if not rfc9162.verify_consistency(checkpoint.size, size, checkpoint.root, roots[size], proof):
        report.fail(
            f"the stored tree's consistency proof from {checkpoint.size} to {size} entries does not verify"
        )


def _stored_signed(conn: Connection, verifier: Verifier, origin: str) -> dict[int, bytes]:
    """size -> root of every checkpoint stored in the database that verifies under the key."""
    found = {}
    for kept in store.all_checkpoints(conn):
        try:
            checkpoint = open_checkpoint(kept.note, verifier)
        except NoteError:
            continue
        if checkpoint.origin == origin:
            found[checkpoint.size] = checkpoint.root
    return found
