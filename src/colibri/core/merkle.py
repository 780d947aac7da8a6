"""RFC 9162 §2.1 hashing over SHA-256, shared by the proof store's seals and the verifiable log.

A leaf is hashed as SHA-256(0x00 ‖ data) and an interior node as SHA-256(0x01 ‖ left ‖ right);
`build_levels` builds a tree bottom-up, carrying a node without a sibling up unchanged (see
domains/proofs/merkle.py for why that is exactly the RFC's MTH).
"""

from __future__ import annotations

import hashlib
from operator import methodcaller

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()  # MTH of the empty list (RFC 9162 §2.1.1)

_sha256 = hashlib.sha256
_digest = methodcaller("digest")
_NODE = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    """MTH of a single leaf: SHA-256(0x00 ‖ data)."""
    return _sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """An interior node: SHA-256(0x01 ‖ left ‖ right)."""
    return _sha256(b"\x01" + left + right).digest()


def build_levels(leaf_hashes: list[bytes]) -> list[list[bytes]]:
    """Every level of the tree, from the leaf hashes (level 0) up to the root (last level)."""
    levels = [leaf_hashes]
    level = leaf_hashes
    while len(level) > 1:
        # SHA-256(0x01 ‖ left ‖ right) for each pair, mapped in C (the log verifier's hot loop).
        joined = map(_NODE.__add__, map(bytes.__add__, level[0::2], level[1::2]))
        upper = list(map(_digest, map(_sha256, joined)))
        if len(level) % 2:
            upper.append(level[-1])  # carried up unchanged, never duplicated
        levels.append(upper)
        level = upper
    return levels
