"""Verification of the decision trail: the chain (or one session of it) and Merkle seals.

The whole chain is checked against its anchor (`trail_head`): the chain must end exactly
at the anchored seq with the anchored hash, so a deleted, rewritten or added newest record
is reported like any other. Everything is read inside one read transaction, so records a
concurrent writer appends meanwhile are simply not in scope.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from colibri.domains.proofs.seals import SealCheck, check_seal
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
    scan_session,
)
from colibri.storage.database import snapshot

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
    conn: sqlite3.Connection,
    *,
    session_id: str | None = None,
    from_seq: int | None = None,
    to_seq: int | None = None,
    progress: Progress | None = None,
) -> Report:
    """Check the chain (or `session_id`'s records), optionally limited to from_seq..to_seq.

    A sealed session checked without a seq range also has its Merkle root recomputed.
    """
    with snapshot(conn):
        if session_id is not None:
            return _verify_session(conn, session_id, from_seq, to_seq)
        head = read_head_or_genesis(conn)
        first = 1 if from_seq is None else from_seq
        last = head.seq if to_seq is None else min(to_seq, head.seq)
        result = scan_range(conn, first, last, progress=progress)
        if result.predecessor_missing:
            result.add(Break(first - 1, SEQ_GAP, first - 1, next_seq_after(conn, first - 1)))
        check_anchor(conn, head, result, upto=to_seq)
        return Report.of(result)


def _verify_session(
    conn: sqlite3.Connection, session_id: str, from_seq: int | None, to_seq: int | None
) -> Report:
    session = records.require_session(conn, session_id, open_only=False)
    first = 1 if from_seq is None else from_seq
    last = LAST_SEQ if to_seq is None else to_seq
    result = scan_session(conn, session_id, first, last)
    whole = from_seq is None and to_seq is None
    seals = [check_seal(conn, session_id, session.seal)] if whole and session.seal is not None else []
    return Report.of(result, seals)


def check_anchor(
    conn: sqlite3.Connection, head: Head, result: ScanResult, *, upto: int | None = None
) -> None:
    """The chain must end at the anchor: no record after it, and the last one bears its hash.

    `result` is a scan that was asked to reach `head.seq`; `upto` is the caller's to_seq.
    """
    if upto is None or upto > head.seq:
        beyond = next_seq_after(conn, head.seq)
        if beyond is not None and (upto is None or beyond <= upto):
            result.add(Break(head.seq + 1, SEQ_GAP, None, beyond))
    if result.last_seq == head.seq and result.last_hash != head.hash:
        result.add(Break(head.seq, HASH_MISMATCH, head.hash, result.last_hash))
