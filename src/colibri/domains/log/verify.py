"""Verifying a database's log against a signed checkpoint kept elsewhere (SPEC §11, §14).

Checked, in this order: the note's signature by the verifier key (or by a key that recorded
handovers lead to from it, continuity.py); its origin is this log's; the log has at least the
checkpoint's size; the root of the first `size` entries is the signed root (and so is the root at
each handover used); the stored tree proves the current log consistent with the checkpoint (RFC
9162 §2.1.4); the stored tree is the one the entries make. The first entry index that differs is
named. The log alone is read (SPEC §25): whether each entry still matches the record or call row
it logs is `colibri verify --db`'s question (status.py), not this one's.

When the entries were rewritten and the stored tree rebuilt over them, nothing in the log can
say which entry changed; the checkpoints stored in the database that still verify under the
keys narrow it down to a range: entries below the largest such checkpoint whose root still
matches are unchanged, and the first difference is below the checkpoint's size.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, field

from colibri.core.database import Connection, Database
from colibri.domains.log import fastcheck, rfc9162, store, tree
from colibri.domains.log.checkpoint import Checkpoint, open_checkpoint
from colibri.domains.log.continuity import Handover, key_chain
from colibri.domains.log.notary import default_origin
from colibri.domains.log.note import NoteError, Verifier, shown
from colibri.domains.log.scan import ScanResult, scan


@dataclass(slots=True)
class CheckpointReport:
    """What `verify --checkpoint` found. `first_difference` is (lo, hi): the first entry that
    differs lies in lo..hi, and lo == hi when it is known exactly."""

    checkpoint: Checkpoint
    signed_by: Verifier
    handovers: list[Handover] = field(default_factory=list)  # from the given key to `signed_by`
    log_size: int = 0
    problems: list[str] = field(default_factory=list)
    known: int | None = None  # the first entry known to differ
    bounds: tuple[int, int] | None = None  # a range the first difference lies in, when not known
    # A range some difference lies in: the leaves under the first stored node that no longer
    # matches the entries (the log alone cannot tell which of them changed, or whether the node did).
    within: tuple[int, int] | None = None

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def first_difference(self) -> tuple[int, int] | None:
        """The first difference is at most the smallest index that some finding ends at, and at
        least what a still-matching signed checkpoint proves unchanged (else the tree's range)."""
        ends = [
            end
            for end in (
                self.known,
                None if self.bounds is None else self.bounds[1],
                self.within and self.within[1],
            )
            if end is not None
        ]
        if not ends:
            return None
        hi = min(ends)
        lo = self.bounds[0] if self.bounds else self.within[0] if self.within else self.known
        assert lo is not None
        return min(lo, hi), hi

    def differs_within(self, problem: str, lo: int, hi: int) -> None:
        """Some entry from lo to hi differs (not necessarily the first)."""
        self.problems.append(problem)
        if self.within is None:
            self.within = (lo, hi)

    def fail(self, problem: str, index: int | None = None) -> None:
        self.problems.append(problem)
        if index is not None and (self.known is None or index < self.known):
            self.known = index

    def narrow(self, problem: str, lo: int, hi: int) -> None:
        """The first difference lies somewhere in lo..hi."""
        self.problems.append(problem)
        if self.bounds is None or hi < self.bounds[1]:
            self.bounds = (lo, hi)


def verify_against(
    db: Database,
    note: str,
    verifier: Verifier,
    origin: str | None = None,
    pool: Executor | None = None,
) -> CheckpointReport:
    """Verify the log of the database `db` against the checkpoint `note`.

    Raises NoteError when the note does not verify under the key, nor under a key that the
    handovers recorded in the database lead to from it (nothing else can be said then).
    `origin` is the expected origin (None: `colibri/<database id>`); `pool` as for fastcheck.check.
    """
    with db.snapshot() as conn:
        expected_origin = origin or default_origin(conn)
        report = _opened(note, verifier, key_chain(conn, verifier, expected_origin))
        checkpoint = report.checkpoint
        if checkpoint.origin != expected_origin:
            report.fail(
                f"the checkpoint is for log {shown(checkpoint.origin)}, this database's log is "
                f"{expected_origin!r} (set COLIBRI_LOG_ORIGIN as the server had it)"
            )
            return report
        keys = [verifier, *(handover.to for handover in report.handovers)]
        stored = _stored_signed(conn, keys, checkpoint.origin)
        sizes = frozenset({checkpoint.size, *stored, *(h.checkpoint.size for h in report.handovers)})
        size = tree.size(conn)
        # The parallel pass reads SQLite files by path; another store is checked over its connection.
        on_file = db.dialect.name == "sqlite"
        fast = fastcheck.check(
            db.path, conn, size, sizes, parallel=on_file, pool=pool if on_file else None, rows=False
        )
        report.log_size = size
        if fast.ok:
            _check_prefix(conn, report, size, fast.roots, None, stored)
            _check_stored_root(conn, report, size, fast.roots[size])
            return report
        # Something differs: the exact pass names the first entry that does.
        result = scan(conn, sizes, rows=False)
        report.log_size = result.size
        _check_prefix(conn, report, result.size, {**result.roots, result.size: result.root}, result, stored)
        if result.first_difference is not None:
            report.fail(result.first_difference.reason, result.first_difference.index)
        if not result.tree_matches_entries:
            where = result.first_tree_mismatch
            if where is None:
                report.fail("the stored tree no longer matches the entries")
            else:
                last = where + result.tree_mismatch_leaves - 1
                problem = f"the stored tree no longer matches the entries from entry {where} on"
                report.differs_within(f"{problem} (its node over entries {where} to {last})", where, last)
    return report


def _opened(note: str, verifier: Verifier, chain: list[Handover]) -> CheckpointReport:
    """The checkpoint opened by `verifier`, else by the newest key of the chain that opens it."""
    try:
        return CheckpointReport(open_checkpoint(note, verifier), verifier)
    except NoteError as exc:
        refused = exc
    for at in range(len(chain) - 1, -1, -1):
        try:
            checkpoint = open_checkpoint(note, chain[at].to)
        except NoteError:
            continue
        return CheckpointReport(checkpoint, chain[at].to, chain[: at + 1])
    raise refused


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
    for handover in report.handovers:
        _check_root(report, handover.checkpoint, roots, result, stored, "the key handover at that size")
    if not _check_root(report, checkpoint, roots, result, stored, "the checkpoint"):
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


def _check_root(  # noqa: PLR0917 - the pieces of one verification
    report: CheckpointReport,
    signed: Checkpoint,
    roots: dict[int, bytes],
    result: ScanResult | None,
    stored: dict[int, bytes],
    whose: str,
) -> bool:
    """Whether the log's first `signed.size` entries have the signed root; if not, say so and
    name the first difference, or the range it lies in when the rows cannot tell."""
    if not signed.size or roots.get(signed.size) == signed.root:
        return True
    problem = f"the root of the log's first {signed.size} entries is not {whose}'s: history was rewritten"
    first = None if result is None else result.first_difference
    if first is not None and first.index < signed.size:
        report.fail(problem)  # the rows name the entry: scan's difference is reported with it
        return False
    proven = max((s for s, root in stored.items() if s < signed.size and roots.get(s) == root), default=0)
    report.narrow(
        problem
        + " together with its log entries, so the changed entry cannot be named exactly: "
        + (
            f"entries 0..{proven - 1} still match a signed checkpoint kept in the database"
            if proven
            else "no smaller signed checkpoint kept in the database still matches"
        ),
        proven,
        signed.size - 1,
    )
    return False


def _stored_signed(conn: Connection, keys: list[Verifier], origin: str) -> dict[int, bytes]:
    """size -> root of every checkpoint stored in the database that verifies under one of the keys."""
    found = {}
    for kept in store.all_checkpoints(conn):
        for key in keys:
            try:
                checkpoint = open_checkpoint(kept.note, key)
            except NoteError:
                continue
            if checkpoint.origin == origin:
                found[checkpoint.size] = checkpoint.root
            break
    return found
