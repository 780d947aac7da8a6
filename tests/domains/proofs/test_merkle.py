"""The Merkle module against the RFC 6962 / Certificate Transparency reference vectors and a
recursive model written straight from RFC 9162 §2.1."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from colibri.domains.proofs import merkle
from tests.domains.ct_vectors import CT_LEAVES, CT_ROOTS

# (1-based leaf, tree size, audit path) from the reference file of CT_LEAVES (kSHA256Paths).
CT_PATHS = [
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
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (3, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        2,
        5,
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def model_mth(leaves: list[bytes]) -> bytes:
    """MTH(D[n]) exactly as RFC 9162 §2.1.1 defines it, recursively."""
    if not leaves:
        return _sha(b"")
    if len(leaves) == 1:
        return _sha(b"\x00" + leaves[0])
    k = 1 << ((len(leaves) - 1).bit_length() - 1)  # largest power of two smaller than n
    return _sha(b"\x01" + model_mth(leaves[:k]) + model_mth(leaves[k:]))


def model_path(m: int, leaves: list[bytes]) -> list[bytes]:
    """PATH(m, D[n]) exactly as RFC 9162 §2.1.3.1 defines it, recursively."""
    if len(leaves) == 1:
        return []
    k = 1 << ((len(leaves) - 1).bit_length() - 1)
    if m < k:
        return [*model_path(m, leaves[:k]), model_mth(leaves[k:])]
    return [*model_path(m - k, leaves[k:]), model_mth(leaves[:k])]


@pytest.mark.parametrize("size", range(9))
def test_roots_match_the_certificate_transparency_vectors(size: int) -> None:
    assert merkle.tree_root(CT_LEAVES[:size]).hex() == CT_ROOTS[size]
    assert model_mth(CT_LEAVES[:size]).hex() == CT_ROOTS[size]


@pytest.mark.parametrize(("leaf", "size", "path"), CT_PATHS)
def test_inclusion_paths_match_the_certificate_transparency_vectors(
    leaf: int, size: int, path: list[str]
) -> None:
    levels = merkle.build_levels([merkle.leaf_hash(data) for data in CT_LEAVES[:size]])
    got = merkle.inclusion_path(levels, leaf - 1)
    assert [node.hex() for node in got] == path
    root = bytes.fromhex(CT_ROOTS[size])
    assert merkle.verify_inclusion(CT_LEAVES[leaf - 1], leaf - 1, size, got, root)


def test_a_single_leaf_has_an_empty_path_and_the_leaf_hash_as_root() -> None:
    levels = merkle.build_levels([merkle.leaf_hash(b"only")])
    assert merkle.inclusion_path(levels, 0) == []
    assert merkle.verify_inclusion(b"only", 0, 1, [], merkle.leaf_hash(b"only"))
    assert not merkle.verify_inclusion(b"only", 0, 1, [merkle.leaf_hash(b"x")], merkle.leaf_hash(b"only"))


def test_odd_leaves_are_carried_up_not_duplicated() -> None:
    a, b, c = (merkle.leaf_hash(x) for x in (b"a", b"b", b"c"))
    assert merkle.root_from_leaf_hashes([a, b, c]) == merkle.node_hash(merkle.node_hash(a, b), c)
    assert merkle.root_from_leaf_hashes([a, b, c]) != merkle.node_hash(
        merkle.node_hash(a, b), merkle.node_hash(c, c)
    )


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=2000), st.binary(min_size=1, max_size=4))
@example(2000, b"max").via("the largest size")
@example(1025, b"ragged").via("one past a power of two")
@example(1024, b"full").via("a power of two")
def test_every_proof_verifies_and_fails_for_a_wrong_leaf_index_or_root(size: int, salt: bytes) -> None:
    leaves = [_sha(salt + i.to_bytes(4, "big")) for i in range(size)]
    levels = merkle.build_levels([merkle.leaf_hash(leaf) for leaf in leaves])
    root = levels[-1][0]
    assert root == model_mth(leaves)
    wrong_root = _sha(root)
    for index in range(size):
        path = merkle.inclusion_path(levels, index)
        assert merkle.verify_inclusion(leaves[index], index, size, path, root)
        assert not merkle.verify_inclusion(leaves[index] + b"!", index, size, path, root)
        assert not merkle.verify_inclusion(leaves[index], index, size, path, wrong_root)
        if size > 1:
            other = (index + 1) % size
            assert not merkle.verify_inclusion(leaves[index], other, size, path, root)
            assert not merkle.verify_inclusion(leaves[other], index, size, path, root)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_paths_equal_the_recursive_definition(data: st.DataObject) -> None:
    size = data.draw(st.integers(min_value=1, max_value=70))
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    leaves = [bytes([i % 256, i // 256]) for i in range(size)]
    levels = merkle.build_levels([merkle.leaf_hash(leaf) for leaf in leaves])
    assert merkle.inclusion_path(levels, index) == model_path(index, leaves)


def test_verification_rejects_impossible_positions_and_paths() -> None:
    leaves = CT_LEAVES[:5]
    levels = merkle.build_levels([merkle.leaf_hash(leaf) for leaf in leaves])
    root, path = levels[-1][0], merkle.inclusion_path(levels, 2)
    assert merkle.verify_inclusion(leaves[2], 2, 5, path, root)
    assert not merkle.verify_inclusion(leaves[2], 5, 5, path, root)  # index == size
    assert not merkle.verify_inclusion(leaves[2], -1, 5, path, root)
    assert not merkle.verify_inclusion(leaves[2], 2, 3, path, root)  # a size with another shape
    assert not merkle.verify_inclusion(leaves[2], 2, 5, [*path, root], root)  # too long
    assert not merkle.verify_inclusion(leaves[2], 2, 5, path[:-1], root)  # too short
    with pytest.raises(ValueError, match="outside a tree"):
        merkle.sibling_positions(5, 5)


def test_verify_proof_takes_the_tool_answer_and_refuses_anything_malformed() -> None:
    leaves = [_sha(bytes([i])) for i in range(11)]
    levels = merkle.build_levels([merkle.leaf_hash(leaf) for leaf in leaves])
    root = levels[-1][0].hex()
    proof: dict[str, Any] = {
        "leaf_index": 7,
        "tree_size": 11,
        "record_hash": leaves[7].hex(),
        "audit_path": [node.hex() for node in merkle.inclusion_path(levels, 7)],
    }
    assert merkle.verify_proof(proof, root)
    assert not merkle.verify_proof({**proof, "leaf_index": 6}, root)
    assert not merkle.verify_proof({**proof, "leaf_index": True}, root)
    assert not merkle.verify_proof({**proof, "record_hash": leaves[7].hex().upper()}, root)
    assert not merkle.verify_proof({**proof, "audit_path": [*proof["audit_path"][:-1], "zz" * 32]}, root)
    assert not merkle.verify_proof({key: value for key, value in proof.items() if key != "tree_size"}, root)
    assert not merkle.verify_proof(proof, root[:-2])


def test_level_sizes_halve_rounding_up() -> None:
    assert merkle.level_sizes(1) == [1]
    assert merkle.level_sizes(5) == [5, 3, 2, 1]
    assert merkle.level_sizes(8) == [8, 4, 2, 1]
