"""Rechecking a seal: the Merkle root over a session's stored record hashes, against the seal,
and the stored tree that `merkle_root` serves proofs from, against the tree rebuilt from them.

What a seal check proves is deliberately narrow: the sealed root and leaf count still match
the session's records *as stored*, in order, and so do the stored tree's nodes and leaf seqs.
Whether each stored hash matches its record's content is the chain check's job
(trail/scan.py); together they cover every byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from colibri.domains.proofs import tree_store
from colibri.domains.proofs.merkle import EMPTY_ROOT, HASH_SIZE, build_levels, leaf_hash
from colibri.domains.proofs.repository import Seal
from colibri.domains.trail import api as trail
from colibri.storage import Connection

_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class SealCheck:
    """A sealed root next to the root recomputed now."""

    session_id: str
    sealed_root: str
    computed_root: str
    sealed_leaf_count: int
    computed_leaf_count: int
    stored_tree_intact: bool

    @property
    def valid(self) -> bool:
        return (
            self.sealed_root == self.computed_root
            and self.sealed_leaf_count == self.computed_leaf_count
            and self.stored_tree_intact
        )


def leaf_of_stored(stored: bytes | str) -> bytes:
    """The Merkle leaf hash of a stored record hash (its 32 raw bytes, per SPEC §5).

    A stored value that is not 64 hex digits (only possible by tampering) is hashed as its
    raw bytes, which cannot reproduce a sealed leaf.
    """
    raw = stored.encode("utf-8", "surrogateescape") if isinstance(stored, str) else bytes(stored)
    text = raw.decode("latin-1")
    data = bytes.fromhex(text) if len(raw) == 2 * HASH_SIZE and _HEX.issuperset(text) else raw
    return leaf_hash(data)


def compare(conn: Connection, session_id: str, seal: Seal, leaf_hashes: list[bytes]) -> SealCheck:
    """Recompute the tree over `leaf_hashes` (the session's leaves, in seq order) and set its
    root beside `seal` and its levels beside the stored ones."""
    levels = build_levels(leaf_hashes) if leaf_hashes else []
    seqs = trail.record_seqs(conn, session_id)
    return SealCheck(
        session_id=session_id,
        sealed_root=seal.root,
        computed_root=(levels[-1][0] if levels else EMPTY_ROOT).hex(),
        sealed_leaf_count=seal.leaf_count,
        computed_leaf_count=len(leaf_hashes),
        stored_tree_intact=len(seqs) == len(leaf_hashes)
        and tree_store.tree_matches(conn, session_id, levels, seqs),
    )


def check_seal(conn: Connection, session_id: str, seal: Seal) -> SealCheck:
    """Recheck one sealed session against its stored record hashes."""
    return compare(conn, session_id, seal, leaves_of(trail.stored_hash_bytes(conn, session_id)))


def leaves_of(stored: Iterable[bytes | str]) -> list[bytes]:
    """Leaf hashes of stored record hashes, in order."""
    return [leaf_of_stored(value) for value in stored]
