"""Roots and proofs from complete subtrees, against Certificate Transparency's reference data
and against a recursive model of RFC 9162 §2.1; every proof fails for any changed byte,
index or size."""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colibri.domains.log import rfc9162
from colibri.domains.proofs import merkle
from tests.domains.ct_vectors import CT_LEAVES, CT_ROOTS

# The consistency proofs between snapshots of CT_LEAVES from the same reference file
# (kSHA256Proofs: snapshot1, snapshot2, proof).
CT_CONSISTENCY = [
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        [
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]


def oracle(leaves: list[bytes]) -> rfc9162.SubtreeHash:
    """Complete subtrees straight from the leaves, the way the stored tree answers."""
    levels = merkle.build_levels([merkle.leaf_hash(leaf) for leaf in leaves])

    def subtree(start: int, size: int) -> bytes:
        level = size.bit_length() - 1
        assert start % size == 0 and start + size <= len(leaves)
        return levels[level][start >> level]

    return subtree


def model_mth(leaves: list[bytes]) -> bytes:
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return merkle.leaf_hash(leaves[0])
    k = rfc9162.split_point(len(leaves))
    return merkle.node_hash(model_mth(leaves[:k]), model_mth(leaves[k:]))


def model_subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    """SUBPROOF(m, D[n], b) of RFC 9162 §2.1.4.1, recursively."""
    n = len(leaves)
    if m == n:
        return [] if whole else [model_mth(leaves)]
    k = rfc9162.split_point(n)
    if m <= k:
        return [*model_subproof(m, leaves[:k], whole), model_mth(leaves[k:])]
    return [*model_subproof(m - k, leaves[k:], False), model_mth(leaves[:k])]


@pytest.mark.parametrize(("old", "new", "proof"), CT_CONSISTENCY)
def test_certificate_transparency_consistency_vectors(old: int, new: int, proof: list[str]) -> None:
    subtree = oracle(CT_LEAVES[:new])
    assert [node.hex() for node in rfc9162.consistency_proof(subtree, old, new)] == proof
    old_root, new_root = bytes.fromhex(CT_ROOTS[old]), bytes.fromhex(CT_ROOTS[new])
    assert rfc9162.verify_consistency(old, new, old_root, new_root, [bytes.fromhex(p) for p in proof])
    assert rfc9162.range_hash(subtree, 0, new) == new_root
    if proof:
        assert not rfc9162.verify_consistency(old, new, new_root, old_root, [bytes.fromhex(p) for p in proof])


def test_certificate_transparency_roots() -> None:
    for size, root in enumerate(CT_ROOTS[1:], start=1):
        assert rfc9162.range_hash(oracle(CT_LEAVES[:size]), 0, size).hex() == root


def _leaves(count: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(32) for _ in range(count)]


def test_every_pair_up_to_64_leaves_matches_the_model_and_verifies() -> None:
    leaves = _leaves(64)
    for n in range(1, 65):
        subtree, root = oracle(leaves[:n]), model_mth(leaves[:n])
        assert rfc9162.range_hash(subtree, 0, n) == root
        for m in range(1, n + 1):
            proof = rfc9162.consistency_proof(subtree, m, n)
            assert proof == model_subproof(m, leaves[:n], True)
            assert rfc9162.verify_consistency(m, n, model_mth(leaves[:m]), root, proof)
        for i in range(n):
            path = rfc9162.inclusion_path(subtree, i, n)
            assert merkle.verify_inclusion(leaves[i], i, n, path, root)


def consistency_fails_for_every_change(m: int, n: int, roots: list[bytes], proof: list[bytes]) -> None:
    old_root, new_root = roots[m], roots[n]
    for j, node in enumerate(proof):
        for position in (0, 13, 31):
            changed = bytearray(node)
            changed[position] ^= 0x01
            bad = [*proof[:j], bytes(changed), *proof[j + 1 :]]
            assert not rfc9162.verify_consistency(m, n, old_root, new_root, bad)
    # Another size, checked against the root of that size (a checkpoint signs both together).
    for m2, n2 in ((m - 1, n), (m + 1, n), (m, n - 1)):
        if 0 < m2 < n2 <= n:
            assert not rfc9162.verify_consistency(m2, n2, roots[m2], roots[n2], proof)
    # Another size with the same roots (Certificate Transparency's own checks).
    for m2, n2 in ((m, 2 * n), (m, n // 2), (m ^ 2, n)):
        if (m2, n2) != (m, n) and 0 < m2 <= n2:
            assert not rfc9162.verify_consistency(m2, n2, old_root, new_root, proof)
    if proof:
        assert not rfc9162.verify_consistency(m, n, old_root, new_root, proof[:-1])
        assert not rfc9162.verify_consistency(m, n, old_root, new_root, [*proof, proof[-1]])
    for root_index in (0, 31):
        flipped = bytearray(old_root)
        flipped[root_index] ^= 0x80
        assert not rfc9162.verify_consistency(m, n, bytes(flipped), new_root, proof)
        flipped = bytearray(new_root)
        flipped[root_index] ^= 0x80
        assert not rfc9162.verify_consistency(m, n, old_root, bytes(flipped), proof)


def inclusion_fails_for_every_change(
    leaf: bytes, i: int, n: int, path: list[bytes], roots: list[bytes]
) -> None:
    root = roots[n]
    for j, node in enumerate(path):
        changed = bytearray(node)
        changed[j % 32] ^= 0x04
        assert not merkle.verify_inclusion(leaf, i, n, [*path[:j], bytes(changed), *path[j + 1 :]], root)
    for position in (0, 31):
        changed_leaf = bytearray(leaf)
        changed_leaf[position] ^= 0x01
        assert not merkle.verify_inclusion(bytes(changed_leaf), i, n, path, root)
    for i2 in (i + 1, i - 1, i ^ 2):
        if i2 != i and 0 <= i2 < n:
            assert not merkle.verify_inclusion(leaf, i2, n, path, root)
    # Another size, checked against the root of that size; and CT's 2n and n/2 with the same root.
    for n2 in (n - 1, n + 1):
        if i < n2 < len(roots):
            assert not merkle.verify_inclusion(leaf, i, n2, path, roots[n2])
    for n2 in (2 * n, n // 2):
        if i < n2 and n2 != n:
            assert not merkle.verify_inclusion(leaf, i, n2, path, root)
    assert not merkle.verify_inclusion(leaf, i, n, [*path, path[-1]] if path else [root], root)


@settings(max_examples=12, deadline=None)
@given(st.integers(min_value=1, max_value=2000), st.randoms(use_true_random=False))
def test_random_sizes_up_to_2000_every_index_and_pair_verifies_and_any_change_fails(
    n: int, rng: random.Random
) -> None:
    leaves = _leaves(n + 1, seed=n)
    subtree = oracle(leaves)
    roots = [rfc9162.range_hash(subtree, 0, m) for m in range(n + 2)]
    root = roots[n]
    leaves = leaves[:n]
    assert root == merkle.tree_root(leaves)
    checked = set(rng.sample(range(n), min(n, 25)))
    for i in range(n):
        path = rfc9162.inclusion_path(subtree, i, n)
        assert merkle.verify_inclusion(leaves[i], i, n, path, root)
        if i in checked:
            inclusion_fails_for_every_change(leaves[i], i, n, path, roots)
    for m in range(1, n + 1):
        proof = rfc9162.consistency_proof(subtree, m, n)
        assert rfc9162.verify_consistency(m, n, roots[m], root, proof)
        if m in checked and m < n:
            consistency_fails_for_every_change(m, n, roots, proof)


def test_degenerate_consistency_cases() -> None:
    empty = hashlib.sha256(b"").digest()
    root = merkle.tree_root(CT_LEAVES[:3])
    assert rfc9162.verify_consistency(0, 3, empty, root, [])
    assert not rfc9162.verify_consistency(0, 3, empty, root, [root])
    assert rfc9162.verify_consistency(3, 3, root, root, [])
    assert not rfc9162.verify_consistency(3, 3, root, empty, [])
    assert not rfc9162.verify_consistency(3, 2, root, root, [])
    assert not rfc9162.verify_consistency(1, 3, root, root, [])
    with pytest.raises(ValueError, match="old size"):
        rfc9162.consistency_proof(oracle(CT_LEAVES[:3]), 0, 3)


def test_every_byte_of_every_proof_matters_up_to_20_leaves() -> None:
    """Exhaustive where cheap: each byte of each proof element, of each leaf and root, changed
    alone, makes every inclusion and consistency proof of trees up to 20 leaves fail."""
    leaves = _leaves(20, seed=7)
    for n in range(1, 21):
        subtree = oracle(leaves[:n])
        roots = [rfc9162.range_hash(subtree, 0, m) for m in range(n + 1)]
        for i in range(n):
            path = rfc9162.inclusion_path(subtree, i, n)
            for j in range(len(path)):
                for b in range(32):
                    changed = [*path]
                    changed[j] = path[j][:b] + bytes([path[j][b] ^ 0x01]) + path[j][b + 1 :]
                    assert not merkle.verify_inclusion(leaves[i], i, n, changed, roots[n])
            for b in range(32):
                assert not merkle.verify_inclusion(
                    leaves[i][:b] + bytes([leaves[i][b] ^ 0x01]) + leaves[i][b + 1 :], i, n, path, roots[n]
                )
        for m in range(1, n):
            proof = rfc9162.consistency_proof(subtree, m, n)
            for j in range(len(proof)):
                for b in range(32):
                    changed = [*proof]
                    changed[j] = proof[j][:b] + bytes([proof[j][b] ^ 0x01]) + proof[j][b + 1 :]
                    assert not rfc9162.verify_consistency(m, n, roots[m], roots[n], changed)
            for b in range(32):
                bad_old = roots[m][:b] + bytes([roots[m][b] ^ 0x01]) + roots[m][b + 1 :]
                assert not rfc9162.verify_consistency(m, n, bad_old, roots[n], proof)
