"""RFC 9162 §2.1 roots and proofs over a log too large to hold in memory.

Everything here is expressed through one oracle, `SubtreeHash(start, size)`: the hash of
the complete subtree of `size` leaves (a power of two) starting at leaf `start` (a multiple
of `size`). The tree store answers it from stored nodes, so a root, an inclusion path
(§2.1.3.1) or a consistency proof (§2.1.4.1) costs O(log n) oracle calls: the RFC's
recursion only ever asks for complete subtrees and at most two ragged right edges, and a
ragged edge is the fold of the O(log n) complete subtrees its size decomposes into.

Leaf and node hashing and inclusion verification are `colibri.domains.proofs.merkle`'s;
consistency verification (§2.1.4.2) lives here beside the proofs it checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from colibri.core.merkle import EMPTY_ROOT, node_hash

SubtreeHash = Callable[[int, int], bytes]


def split_point(n: int) -> int:
    """The largest power of two smaller than n (n > 1): where the RFC splits n leaves."""
    return 1 << ((n - 1).bit_length() - 1)


def range_hash(subtree: SubtreeHash, lo: int, hi: int) -> bytes:
    """MTH(D[lo:hi]) for a range the RFC recursion produces (lo aligned to hi - lo's power of two).

    Such a range is its complete subtrees, largest first, folded from the right.
    """
    if hi <= lo:
        return EMPTY_ROOT
    parts = []
    start, remaining = lo, hi - lo
    while remaining:
        size = 1 << (remaining.bit_length() - 1)
        parts.append(subtree(start, size))
        start += size
        remaining -= size
    digest = parts[-1]
    for part in reversed(parts[:-1]):
        digest = node_hash(part, digest)
    return digest


def inclusion_path(subtree: SubtreeHash, index: int, size: int) -> list[bytes]:
    """PATH(index, D[0:size]): sibling hashes from the leaf up to the root."""
    if not 0 <= index < size:
        raise ValueError(f"entry index {index} is outside a log of {size} entries")
    path = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = split_point(hi - lo)
        if index < lo + k:
            path.append(range_hash(subtree, lo + k, hi))
            hi = lo + k
        else:
            path.append(subtree(lo, k))
            lo += k
    path.reverse()
    return path


def consistency_proof(subtree: SubtreeHash, old_size: int, new_size: int) -> list[bytes]:
    """PROOF(old_size, D[0:new_size]) (RFC 9162 §2.1.4.1); empty when the sizes are equal."""
    if not 0 < old_size <= new_size:
        raise ValueError(
            f"a consistency proof needs 0 < old size <= new size; got old {old_size}, new {new_size}"
        )
    proof = []
    lo, hi, m, whole_old_root = 0, new_size, old_size, True
    while m != hi - lo:
        k = split_point(hi - lo)
        if m <= k:
            proof.append(range_hash(subtree, lo + k, hi))
            hi = lo + k
        else:
            proof.append(subtree(lo, k))
            lo += k
            m -= k
            whole_old_root = False
    if not whole_old_root:
        proof.append(range_hash(subtree, lo, hi))
    proof.reverse()
    return proof


def verify_consistency(
    old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """True when `proof` shows the tree `new_root` of `new_size` leaves extends `old_root`.

    The verification algorithm of RFC 9162 §2.1.4.2, step by step. The empty tree is a
    prefix of every tree (with an empty proof); equal sizes need equal roots and no proof.
    """
    if not 0 <= old_size <= new_size:
        return False
    if old_size == 0:
        return not proof and old_root == EMPTY_ROOT
    if old_size == new_size:
        return not proof and old_root == new_root
    path = list(proof)
    if not path:
        return False
    if old_size & (old_size - 1) == 0:  # an exact power of two: the old root is on the path
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root
