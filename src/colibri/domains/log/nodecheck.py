"""The stored tree against the entries, chunk by chunk, for the fast path (fastcheck.py).

Nodes are keyed in post-order (tree.node_id), so the nodes completed by the leaves of one
aligned chunk [lo, hi) are exactly the keys from node_id(0, lo) to node_id(0, hi) - 1: the
chunk's own subtrees, then, at its last leaf, the ancestors above it that the chunk
completes. A worker checks the former against the chunk it has just hashed and hands the
latter to the parent, which rebuilds them from the chunk roots.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import chain
from operator import itemgetter

from colibri.core.database import Connection
from colibri.core.merkle import node_hash
from colibri.domains.log.tree import node_id

_first, _second = itemgetter(0), itemgetter(1)


def chunk_nodes_match(conn: Connection, lo: int, levels: list[list[bytes]], upper: dict[int, bytes]) -> bool:
    """True when the stored nodes completed by leaves lo..lo+len(levels[0])-1 are exactly the
    chunk's complete subtrees (from `levels`, as build_levels makes them) plus ancestors above
    it; those ancestors' stored hashes are added to `upper` for the parent to check."""
    count = len(levels[0])
    hi = lo + count
    if count > 1 and count & (count - 1) == 0 and lo % count == 0:
        return _full_chunk_match(conn, lo, levels, upper)
    expected = {}
    for level in range(1, len(levels)):
        for position, digest in enumerate(levels[level]):
            if (position + 1) << level <= count:  # a complete subtree, not a node carried up
                expected[node_id(level, (lo >> level) + position)] = digest
    top = len(levels) - 1 if count & (count - 1) == 0 else -1  # a full chunk: its root's level
    ancestors = set()
    if top >= 0:
        level = top + 1
        while hi % (1 << level) == 0:
            ancestors.add(node_id(level, (hi >> level) - 1))
            level += 1
    first, last = _first_key(lo), _first_key(hi) - 1
    found = 0
    for key, digest in conn.tuples("SELECT id, hash FROM log_nodes WHERE id BETWEEN ? AND ?", (first, last)):
        if key in expected:
            if expected[key] != digest:
                return False
            found += 1
        elif key in ancestors:
            upper[key] = bytes(digest)
        else:
            return False  # a stored node the entries do not make
    return found == len(expected)


def _full_chunk_match(conn: Connection, lo: int, levels: list[list[bytes]], upper: dict[int, bytes]) -> bool:
    """chunk_nodes_match for a full aligned chunk, compared as two lists: every such chunk
    stores its subtrees at the same offsets from its first key (see _layout)."""
    count = len(levels[0])
    hi = lo + count
    first = _first_key(lo)
    offsets, order = _layout(len(levels) - 1)
    rows = conn.tuples(
        "SELECT id, hash FROM log_nodes WHERE id BETWEEN ? AND ? ORDER BY id", (first, _first_key(hi) - 1)
    ).fetchall()
    inner = len(offsets)
    if len(rows) < inner:
        return False
    flat = list(chain.from_iterable(levels[1:]))
    if list(map(_first, rows[:inner])) != list(map(first.__add__, offsets)):
        return False
    if list(map(_second, rows[:inner])) != [flat[i] for i in order]:
        return False
    ancestors, level = set(), len(levels)
    while hi % (1 << level) == 0:
        ancestors.add(node_id(level, (hi >> level) - 1))
        level += 1
    for key, digest in rows[inner:]:
        if key not in ancestors:
            return False  # a stored node the entries do not make
        upper[key] = digest if type(digest) is bytes else b""  # not a hash: cannot match
    return True


@lru_cache(maxsize=8)
def _layout(height: int) -> tuple[list[int], list[int]]:
    """For a chunk of 2**height leaves starting at an aligned leaf lo: the keys of its subtrees
    minus lo's first key, in key order, and where each is in levels[1:] laid end to end.

    The subtree ending at leaf lo + x of level j has key 2(lo+x) - popcount(lo+x) + j, and
    popcount(lo + x) = popcount(lo) + popcount(x) as lo is a multiple of the chunk size, so
    the offset 2x - popcount(x) + j does not depend on lo."""
    count, start, placed = 1 << height, 0, []
    for level in range(1, height + 1):
        for position in range(count >> level):
            last = ((position + 1) << level) - 1
            placed.append((2 * last - last.bit_count() + level, start + position))
        start += count >> level
    placed.sort()
    return [offset for offset, _ in placed], [index for _, index in placed]


def upper_nodes_match(chunk_roots: list[bytes], chunk: int, upper: dict[int, bytes]) -> bool:
    """The stored ancestors of full chunks are the subtrees the chunk roots make, all of them."""
    expected = {}
    level = chunk.bit_length() - 1
    current = chunk_roots
    while len(current) > 1:
        current = [node_hash(current[i], current[i + 1]) for i in range(0, len(current) - 1, 2)]
        level += 1
        expected.update({node_id(level, position): digest for position, digest in enumerate(current)})
    return expected == upper


def _first_key(leaf: int) -> int:
    """The post-order key of leaf `leaf` itself: how many subtrees completed before it."""
    return 2 * leaf - leaf.bit_count()
