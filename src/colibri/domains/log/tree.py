"""The log's tree on disk: append an entry in O(log n), answer roots and proofs in O(log n).

Only complete subtrees of two or more leaves are stored (`log_nodes`), each written once,
when its last leaf arrives: appending leaf n combines it with the left siblings its index's
trailing one bits call for (on average one), so an append writes the entry and on average
one node. Everything else (`SubtreeHash`) is read back from those rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from colibri.core.database import Connection
from colibri.core.merkle import leaf_hash, node_hash
from colibri.domains.log import rfc9162

RECORD, ACTION = "record", "action"


def node_id(level: int, index: int) -> int:
    """Post-order number of the complete subtree `index` of `level` (2**level leaves).

    After leaves 0..i, 2(i+1) - popcount(i+1) subtrees (leaves included) are complete, and
    leaf i completes those of levels 0..trailing-ones(i) in that order, so this number is the
    order in which subtrees complete.
    """
    last_leaf = ((index + 1) << level) - 1
    return 2 * last_leaf - last_leaf.bit_count() + level


def size(conn: Connection) -> int:
    """How many entries the log holds."""
    row = conn.execute("SELECT idx FROM log_entries ORDER BY idx DESC LIMIT 1").fetchone()
    return 0 if row is None else int(row[0]) + 1


def append(conn: Connection, kind: str, ref: int, entry: bytes) -> int:
    """Add `entry` as the next leaf and store the subtrees it completes; return its index.

    The caller holds the write transaction, so the index taken here (one past the last,
    read and written in one statement) is still the next one when the transaction commits.
    """
    index = int(
        conn.execute(
            "INSERT INTO log_entries (idx, kind, ref, entry_hash)"
            " SELECT coalesce(max(idx) + 1, 0), ?, ?, ? FROM log_entries RETURNING idx",
            (kind, ref, entry),
        ).fetchone()[0]
    )
    digest, level, position = leaf_hash(entry), 0, index
    while position & 1:
        digest = node_hash(_stored_subtree(conn, level, position - 1), digest)
        level, position = level + 1, position >> 1
        conn.execute("INSERT INTO log_nodes (id, hash) VALUES (?, ?)", (node_id(level, position), digest))
    return index


def entry_hash(conn: Connection, index: int) -> bytes:
    row = conn.execute("SELECT entry_hash FROM log_entries WHERE idx = ?", (index,)).fetchone()
    if row is None:
        raise LookupError(f"the log has no entry {index}")
    return bytes(row[0])


def _stored_subtree(conn: Connection, level: int, index: int) -> bytes:
    if level == 0:
        return leaf_hash(entry_hash(conn, index))
    row = conn.execute("SELECT hash FROM log_nodes WHERE id = ?", (node_id(level, index),)).fetchone()
    if row is None:
        raise LookupError(
            f"the stored log tree lacks the subtree of level {level} at {index}; "
            "check it with audit_verify_chain or `colibri verify --checkpoint`"
        )
    return bytes(row[0])


def subtree_reader(conn: Connection) -> rfc9162.SubtreeHash:
    """The `SubtreeHash` oracle over the stored tree."""

    def subtree(start: int, count: int) -> bytes:
        level = count.bit_length() - 1
        return _stored_subtree(conn, level, start >> level)

    return subtree


def root(conn: Connection, tree_size: int) -> bytes:
    """The root of the log's first `tree_size` entries."""
    return rfc9162.range_hash(subtree_reader(conn), 0, tree_size)


def inclusion_path(conn: Connection, index: int, tree_size: int) -> list[bytes]:
    return rfc9162.inclusion_path(subtree_reader(conn), index, tree_size)


def consistency_proof(conn: Connection, old_size: int, new_size: int) -> list[bytes]:
    return rfc9162.consistency_proof(subtree_reader(conn), old_size, new_size)


@dataclass(frozen=True, slots=True)
class Entry:
    """One log entry as stored."""

    index: int
    kind: str
    ref: int
    entry_hash: bytes


def entries(conn: Connection, first: int = 0, last: int | None = None) -> list[Entry]:
    """Entries first..last (inclusive), in index order."""
    upper = size(conn) - 1 if last is None else last
    rows = conn.execute(
        "SELECT idx, kind, ref, entry_hash FROM log_entries WHERE idx BETWEEN ? AND ? ORDER BY idx",
        (first, upper),
    )
    return [Entry(int(r[0]), str(r[1]), int(r[2]), bytes(r[3])) for r in rows]
