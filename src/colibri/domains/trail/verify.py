"""Verification of the decision trail: the chain (or the part of it a session is in) and Merkle seals.

The whole chain is checked against its anchor (`trail_head`): the chain must end exactly
at the anchored seq with the anchored hash, so a deleted, rewritten or added newest record
is reported like any other. Everything is read inside one read transaction, so records a
concurrent writer appends meanwhile are simply not in scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from colibri.domains.proofs.api import SealCheck, compare
from colibri.domains.trail import records
from colibri.domains.trail.repository import Head, read_head_or_genesis
from colibri.domains.trail.scan import (
    HASH_MISMATCH,
    SEQ_GAP,
    Break,
    Progress,
    ScanResult,
    next_seq_after,
    scan_range,
    shown,
)
from colibri.storage import Connection, Database

LAST_SEQ = 2**63 - 1  # SQLite's largest integer: "no upper bound"


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of a verification; `seals` lists every seal that was rechecked."""

    checked: int
    head_hash: str | None
    first_break: Break | None
    breaks: int
    seals: list[SealCheck] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return self.first_break is None and all(seal.valid for seal in self.seals)

    @classmethod
    def of(cls, result: ScanResult, seals: list[SealCheck] | None = None) -> Report:
        return cls(result.checked, result.last_hash, result.first_break, result.breaks, seals or [])


def verify(
    conn: Database,
    *,
    session_id: str | None = None,
    from_seq: int | None = None,
    to_seq: int | None = None,
    progress: Progress | None = None,
) -> Report:
    """Check the chain, optionally limited to from_seq..to_seq.

    With `session_id` the same global range is scanned: the session's records are linked into
    the one chain through other sessions' records, so a deleted record, a record moved out of
    the session (its session_id altered) or a rewritten record whose successor belongs to
    another session can only be seen there. `checked` then still counts every record of the
    range, and `head_hash` is the session's last record in it. A sealed session checked
    without a seq range also has its Merkle root and its stored tree recomputed, from the
    leaves collected by the same scan.
    """
    with conn.snapshot():
        session = None if session_id is None else records.require_session(conn, session_id, open_only=False)
        track = () if session_id is None else (session_id,)
        result = _scan_chain(conn, from_seq, to_seq, track, progress)
        if session is None:
            return Report.of(result)
        seals = []
        if session.seal is not None and from_seq is None and to_seq is None:
            seals.append(compare(conn, session.session_id, session.seal, result.leaves[session.session_id]))
        head = _session_head(conn, session.session_id, from_seq, to_seq)
        return Report(result.checked, head, result.first_break, result.breaks, seals)


def _scan_chain(
    conn: Connection,
    from_seq: int | None,
    to_seq: int | None,
    track: tuple[str, ...],
    progress: Progress | None,
) -> ScanResult:
    """The global chain over from_seq..to_seq (default: all of it), checked against its anchor."""
    head = read_head_or_genesis(conn)
    first = 1 if from_seq is None else from_seq
    last = head.seq if to_seq is None else min(to_seq, head.seq)
    result = scan_range(conn, first, last, track=track, progress=progress)
    if result.predecessor_missing:
        result.add(Break(first - 1, SEQ_GAP, first - 1, next_seq_after(conn, first - 1)))
    check_anchor(conn, head, result, upto=to_seq)
    return result


def _session_head(conn: Connection, session_id: str, from_seq: int | None, to_seq: int | None) -> str | None:
    """The stored hash of the session's last record in the range, as printable text."""
    row = conn.execute(
        f"SELECT {conn.dialect.as_bytes('hash')} FROM thought_records"
        " WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq DESC LIMIT 1",
        (session_id, 1 if from_seq is None else from_seq, LAST_SEQ if to_seq is None else to_seq),
    ).fetchone()
    return None if row is None else shown(row[0])


def check_anchor(conn: Connection, head: Head, result: ScanResult, *, upto: int | None = None) -> None:
    """The chain must end at the anchor: no record after it, and the last one bears its hash.

    `result` is a scan that was asked to reach `head.seq`; `upto` is the caller's to_seq.
    """
    if upto is None or upto > head.seq:
        beyond = next_seq_after(conn, head.seq)
        if beyond is not None and (upto is None or beyond <= upto):
            result.add(Break(head.seq + 1, SEQ_GAP, None, beyond))
    if result.last_seq == head.seq and result.last_hash != head.hash:
        result.add(Break(head.seq, HASH_MISMATCH, head.hash, result.last_hash))
