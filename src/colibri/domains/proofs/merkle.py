"""RFC 9162 §2.1 Merkle trees over SHA-256: tree hash, inclusion proofs, proof verification.

Written from the RFC text. A leaf is hashed as SHA-256(0x00 ‖ data) and an interior node as
SHA-256(0x01 ‖ left ‖ right); a list of n > 1 leaves splits at the largest power of two
smaller than n, and an odd leaf is never duplicated.

The tree is built bottom-up in levels (level 0 holds the leaf hashes). A node left without a
sibling at the right edge of a level is carried up unchanged. That yields exactly the RFC's
recursive MTH: the left part of every split is a complete subtree of power-of-two size, and
bottom-up pairing builds precisely those complete subtrees before it touches the ragged right
edge. The tests check this against the RFC 6962 reference vectors and a recursive model.

Nothing here touches a database: `verify_inclusion` and `verify_proof` need only hashlib, so
an auditor can check a proof returned by `merkle_root` without Colibri.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from colibri.core.merkle import EMPTY_ROOT, HASH_SIZE, build_levels, leaf_hash, node_hash

__all__ = [
    "ALGORITHM",
    "EMPTY_ROOT",
    "HASH_SIZE",
    "build_levels",
    "inclusion_path",
    "leaf_hash",
    "node_hash",
    "root_from_leaf_hashes",
    "tree_root",
    "verify_inclusion",
    "verify_proof",
]

ALGORITHM: Final = "rfc9162-sha256"

_sha256 = hashlib.sha256
_HEX = frozenset("0123456789abcdef")


def root_from_leaf_hashes(leaf_hashes: list[bytes]) -> bytes:
    """The tree head over already-hashed leaves; EMPTY_ROOT for none."""
    if not leaf_hashes:
        return EMPTY_ROOT
    return build_levels(leaf_hashes)[-1][0]


def tree_root(leaves: Sequence[bytes]) -> bytes:
    """MTH(D[n]) of raw leaf data."""
    return root_from_leaf_hashes([leaf_hash(leaf) for leaf in leaves])


def level_sizes(tree_size: int) -> list[int]:
    """How many nodes each level holds in a tree of `tree_size` leaves (level 0 first)."""
    sizes = [tree_size]
    while sizes[-1] > 1:
        sizes.append((sizes[-1] + 1) // 2)
    return sizes


def sibling_positions(tree_size: int, index: int) -> list[tuple[int, int]]:
    """(level, position) of every node on the audit path of leaf `index`, from the leaf upward.

    A node carried up without a sibling contributes nothing at that level, which is how the
    RFC's PATH(m, D[n]) skips a level on the ragged right edge.
    """
    if not 0 <= index < tree_size:
        raise ValueError(f"leaf index {index} is outside a tree of {tree_size} leaves")
    positions = []
    size, position, level = tree_size, index, 0
    while size > 1:
        sibling = position ^ 1
        if sibling < size:
            positions.append((level, sibling))
        position >>= 1
        size = (size + 1) // 2
        level += 1
    return positions


def inclusion_path(levels: list[list[bytes]], index: int) -> list[bytes]:
    """PATH(m, D[n]) (RFC 9162 §2.1.3.1): the sibling hashes from the leaf up to the root."""
    return [levels[level][position] for level, position in sibling_positions(len(levels[0]), index)]


def verify_inclusion(
    leaf: bytes, index: int, tree_size: int, audit_path: Sequence[bytes], root: bytes
) -> bool:
    """True when `audit_path` proves `leaf` (raw leaf data) is leaf `index` of the tree `root`.

    The verification algorithm of RFC 9162 §2.1.3.2, step by step.
    """
    if not 0 <= index < tree_size:
        return False
    fn, sn = index, tree_size - 1
    r = leaf_hash(leaf)
    for p in audit_path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_proof(proof: Mapping[str, Any], root: str) -> bool:
    """Check a `merkle_root` answer offline: its `proof` object against its hex `root`.

    `proof` is `{leaf_index, tree_size, record_hash, audit_path}` exactly as the tool returns
    it. Anything malformed (not hex, wrong length, missing keys) simply does not verify.
    """
    try:
        index, size = proof["leaf_index"], proof["tree_size"]
        leaf = _hash_bytes(proof["record_hash"])
        path = [_hash_bytes(node) for node in proof["audit_path"]]
        root_bytes = _hash_bytes(root)
    except (KeyError, TypeError, ValueError):
        return False
    if type(index) is not int or type(size) is not int:
        return False
    return verify_inclusion(leaf, index, size, path, root_bytes)


def _hash_bytes(value: object) -> bytes:
    if not isinstance(value, str) or len(value) != 2 * HASH_SIZE or not _HEX.issuperset(value):
        raise ValueError("expected a lowercase hex SHA-256 hash")
    return bytes.fromhex(value)
