"""Rechecking a seal: the Merkle root over a session's stored record hashes, against the seal.

What a seal check proves is deliberately narrow: the sealed root and leaf count still match
the session's records *as stored*, in order. Whether each stored hash matches its record's
content is the chain check's job (trail/scan.py); together they cover every byte.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from colibri.domains.proofs import repository
from colibri.domains.proofs.merkle import HASH_SIZE, leaf_hash, root_from_leaf_hashes
from colibri.domains.proofs.repository import Seal

_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class SealCheck:
    """A sealed root next to the root recomputed now."""

    session_id: str
    sealed_root: str
    computed_root: str
    sealed_leaf_count: int
    computed_leaf_count: int

    @property
    def valid(self) -> bool:
        return self.sealed_root == self.computed_root and self.sealed_leaf_count == self.computed_leaf_count


def leaf_of_stored(stored: bytes | str) -> bytes:
    """The Merkle leaf hash of a stored record hash (its 32 raw bytes, per SPEC §5).

    A stored value that is not 64 hex digits (only possible by tampering) is hashed as its
    raw bytes, which cannot reproduce a sealed leaf.
    """
    raw = stored.encode("utf-8", "surrogateescape") if isinstance(stored, str) else bytes(stored)
    text = raw.decode("latin-1")
    data = bytes.fromhex(text) if len(raw) == 2 * HASH_SIZE and _HEX.issuperset(text) else raw
    return leaf_hash(data)


def compare(session_id: str, seal: Seal, leaf_hashes: list[bytes]) -> SealCheck:
    """Recompute the root over `leaf_hashes` and set it beside `seal`."""
    return SealCheck(
        session_id=session_id,
        sealed_root=seal.root,
        computed_root=root_from_leaf_hashes(leaf_hashes).hex(),
        sealed_leaf_count=seal.leaf_count,
        computed_leaf_count=len(leaf_hashes),
    )


def check_seal(conn: sqlite3.Connection, session_id: str, seal: Seal) -> SealCheck:
    """Recheck one sealed session against its stored record hashes."""
    return compare(session_id, seal, leaves_of(repository.stored_hash_bytes(conn, session_id)))


def leaves_of(stored: Iterable[bytes | str]) -> list[bytes]:
    """Leaf hashes of stored record hashes, in order."""
    return [leaf_of_stored(value) for value in stored]
