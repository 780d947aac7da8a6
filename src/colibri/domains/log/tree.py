"""The log's tree on disk: append an entry in O(log n), answer roots and proofs in O(log n).

Only complete subtrees of two or more leaves are stored (`log_nodes`), each written once,
when its last leaf arrives: appending leaf n combines it with the left siblings its index's
trailing one bits call for (on average one), so an append writes the entry and on average
one node. Everything else (`SubtreeHash`) is read back from those rows.

Those left siblings are the log's right edge (`Tail`): the complete subtrees that a tree of
the current size is made of, biggest first. A write transaction reads the tail once, then keeps
it in its memo (storage/memo.py) as its own appends move it, so further appends read nothing:
on PostgreSQL they are statements sent without waiting. The tail a committed transaction left
is kept as a hint; the next one reads only the last entry, and the rest when the hint is stale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from colibri.core.database import Connection
from colibri.core.merkle import leaf_hash, node_hash
from colibri.domains.log import rfc9162

T = TypeVar("T")
RECORD, ACTION = "record", "action"
_TAIL = "log.tail"


@dataclass(frozen=True, slots=True)
class Tail:
    """The log's size, its last entry, and (level, hash) of each subtree along its right edge."""

    size: int
    last_entry: bytes | None
    edge: tuple[tuple[int, bytes], ...]


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

    The caller holds the write transaction, so the tail read or remembered in it is the log's
    own: the index is still the next one when the transaction commits.
    """
    tail = _tail(conn)
    index = tail.size
    conn.execute(
        "INSERT INTO log_entries (idx, kind, ref, entry_hash) VALUES (?, ?, ?, ?)", (index, kind, ref, entry)
    )
    edge = list(tail.edge)
    digest, level, position = leaf_hash(entry), 0, index
    while position & 1:
        digest = node_hash(edge.pop()[1], digest)
        level, position = level + 1, position >> 1
        conn.execute("INSERT INTO log_nodes (id, hash) VALUES (?, ?)", (node_id(level, position), digest))
    edge.append((level, digest))
    conn.memo[_TAIL] = Tail(index + 1, entry, tuple(edge))
    return index


def prepare_append(conn: Connection) -> None:
    """Ask for what the next append will need, without waiting for it: on PostgreSQL the
    question travels with the caller's next read instead of costing a round trip of its own."""
    if _TAIL not in conn.memo:
        conn.memo[_TAIL] = _PendingTail(conn)


def _tail(conn: Connection) -> Tail:
    memo = conn.memo
    tail = memo.get(_TAIL)
    if isinstance(tail, Tail):
        return tail
    tail = (tail if isinstance(tail, _PendingTail) else _PendingTail(conn)).read()
    memo[_TAIL] = tail
    return tail


class _PendingTail:
    """The last entry, asked for; the rest of the tail follows from it (or from the hint).

    Reads once and remembers: a savepoint rolled back may hand this same object out again, and
    the answer stays the one from before that savepoint's appends."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._last = conn.execute("SELECT idx, entry_hash FROM log_entries ORDER BY idx DESC LIMIT 1")
        self._row = None if conn.dialect.pipelined else self._last.fetchone()  # SQLite: read it now
        self._tail: Tail | None = None

    def read(self) -> Tail:
        if self._tail is None:
            row = self._last.fetchone() if self._conn.dialect.pipelined else self._row
            size, last = (0, None) if row is None else (int(row[0]) + 1, bytes(row[1]))
            hint = self._conn.hints.get(_TAIL)
            if isinstance(hint, Tail) and hint.size == size and hint.last_entry == last:
                self._tail = hint  # nobody appended since this process did: the edge it left holds
            else:
                self._tail = Tail(size, last, _read_edge(self._conn, size, last))
        return self._tail


def _read_edge(conn: Connection, size: int, last: bytes | None) -> tuple[tuple[int, bytes], ...]:
    """The right edge of a tree of `size` leaves, from the stored nodes (one query)."""
    parts: list[tuple[int, int]] = []  # (level, index) of each edge subtree, biggest first
    start = 0
    for level in range(size.bit_length() - 1, -1, -1):
        if size >> level & 1:
            parts.append((level, start >> level))
            start += 1 << level
    wanted = [node_id(level, index) for level, index in parts if level]
    stored: dict[int, bytes] = {}
    if wanted:
        marks = ",".join("?" * len(wanted))
        rows = conn.execute(f"SELECT id, hash FROM log_nodes WHERE id IN ({marks})", wanted)
        stored = {int(row[0]): bytes(row[1]) for row in rows}
    edge = []
    for level, index in parts:
        if level == 0:
            assert last is not None
            edge.append((0, leaf_hash(last)))
            continue
        found = stored.get(node_id(level, index))
        if found is None:
            raise LookupError(
                f"the stored log tree lacks the subtree of level {level} at {index}; "
                "check it with audit_verify_chain or `colibri verify --checkpoint`"
            )
        edge.append((level, found))
    return tuple(edge)


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
    """The `SubtreeHash` oracle over the stored tree: one query per subtree asked for."""

    def subtree(start: int, count: int) -> bytes:
        level = count.bit_length() - 1
        return _stored_subtree(conn, level, start >> level)

    return subtree


def root(conn: Connection, tree_size: int) -> bytes:
    """The root of the log's first `tree_size` entries."""
    return _prefetched(conn, lambda subtree: rfc9162.range_hash(subtree, 0, tree_size))


def inclusion_path(conn: Connection, index: int, tree_size: int) -> list[bytes]:
    return _prefetched(conn, lambda subtree: rfc9162.inclusion_path(subtree, index, tree_size))


def consistency_proof(conn: Connection, old_size: int, new_size: int) -> list[bytes]:
    return _prefetched(conn, lambda subtree: rfc9162.consistency_proof(subtree, old_size, new_size))


_ANY_HASH = bytes(32)


def _prefetched(conn: Connection, compute: Callable[[rfc9162.SubtreeHash], T]) -> T:
    """`compute` over the stored tree, its O(log n) subtrees read in two queries, not one each.

    Which subtrees the RFC's algorithms ask for depends on the sizes and indexes alone, never on
    the hashes: a first pass with stand-in hashes learns the list, the second answers from it.
    """
    wanted: list[tuple[int, int]] = []

    def asked(start: int, count: int) -> bytes:
        wanted.append((start, count))
        return _ANY_HASH

    compute(asked)
    known = _read_subtrees(conn, wanted)
    return compute(lambda start, count: known[start, count])


def _read_subtrees(conn: Connection, wanted: list[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
    nodes = {
        node_id(count.bit_length() - 1, start // count): (start, count)
        for start, count in wanted
        if count > 1
    }
    leaves = sorted({start for start, count in wanted if count == 1})
    # Both questions go out before either answer is read: one round trip on PostgreSQL.
    node_rows = _rows_in(conn, "SELECT id, hash FROM log_nodes WHERE id IN ({})", sorted(nodes))
    leaf_rows = _rows_in(conn, "SELECT idx, entry_hash FROM log_entries WHERE idx IN ({})", leaves)
    known = {nodes[int(row[0])]: bytes(row[1]) for row in node_rows()}
    known.update({(int(row[0]), 1): leaf_hash(bytes(row[1])) for row in leaf_rows()})
    for start, count in wanted:
        if (start, count) not in known:
            if count == 1:
                raise LookupError(f"the log has no entry {start}")
            level = count.bit_length() - 1
            raise LookupError(
                f"the stored log tree lacks the subtree of level {level} at {start >> level}; "
                "check it with audit_verify_chain or `colibri verify --checkpoint`"
            )
    return known


def _rows_in(conn: Connection, sql: str, keys: list[int]) -> Callable[[], list[Any]]:
    """Send the query for these keys now; read its rows when called."""
    if not keys:
        return list
    cursor = conn.tuples(sql.format(",".join("?" * len(keys))), keys)
    rows = None if conn.dialect.pipelined else cursor.fetchall()
    return lambda: cursor.fetchall() if rows is None else rows


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
