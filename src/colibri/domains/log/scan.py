"""One pass over the whole log: every entry against the row it logs, every stored node
against the tree rebuilt from the entries, and the roots at the sizes asked for.

Record entries must name the records 1, 2, 3, ... in order (each is logged in the
transaction that chains it); action entries name finished actions in commit order, which
across processes need not be sequence_no order, so actions read ahead of their entry wait
in a small dictionary. A source row no entry names is placed at the first entry that
passed it, or at the end of the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from colibri.core.database import Connection
from colibri.core.merkle import EMPTY_ROOT, leaf_hash, node_hash
from colibri.domains.log.entries import LOCAL_PRINCIPAL, stored_action_entry
from colibri.domains.log.tree import ACTION, RECORD, node_id
from colibri.domains.trail.api import stored_record_hash

Progress = Callable[[int], None]
_BATCH = 4096


@dataclass(frozen=True, slots=True)
class Difference:
    """Where the stored rows first stop matching the log."""

    index: int
    reason: str


@dataclass(slots=True)
class ScanResult:
    size: int = 0
    root: bytes = EMPTY_ROOT
    roots: dict[int, bytes] = field(default_factory=dict)
    tree_matches_entries: bool = True
    first_tree_mismatch: int | None = None  # the first leaf under the first stored node that differs
    tree_mismatch_leaves: int = 0  # how many leaves that node covers
    first_difference: Difference | None = None

    def differ(self, index: int, reason: str) -> None:
        if self.first_difference is None or index < self.first_difference.index:
            self.first_difference = Difference(index, reason)


def scan(
    conn: Connection,
    sizes: frozenset[int] = frozenset(),
    progress: Progress | None = None,
    *,
    rows: bool = True,
) -> ScanResult:
    """Check the log against its sources and its stored tree (call inside one snapshot);
    `rows=False` checks the entries and the tree alone, reading no record or call row."""
    scanner = _Scanner(conn, sizes, rows=rows)
    entries = _rows(conn, "SELECT idx, kind, ref, entry_hash FROM log_entries ORDER BY idx")
    for stored_index, kind, ref, raw in entries:
        scanner.entry(stored_index, kind, ref, bytes(raw))  # type: ignore[call-overload]
        if progress is not None and scanner.index % _BATCH == 0:
            progress(_BATCH)
    if progress is not None and scanner.index % _BATCH:
        progress(scanner.index % _BATCH)
    return scanner.finish()


class _Scanner:
    """The state of one pass: three source cursors, the stored nodes, the tree's frontier."""

    def __init__(self, conn: Connection, sizes: frozenset[int], *, rows: bool) -> None:
        self.result = ScanResult()
        self.sizes = sizes
        self.index = 0
        self.rows = rows
        self.records = _records(conn) if rows else iter(())
        self.actions = _actions(conn) if rows else iter(())
        self.nodes = _rows(conn, "SELECT id, hash FROM log_nodes ORDER BY id")
        self.next_record = next(self.records, None)
        self.next_action = next(self.actions, None)
        self.next_node = next(self.nodes, None)
        # sequence_no -> (its entry, the index of the log entry that read past it)
        self.waiting: dict[int, tuple[bytes, int]] = {}
        self.frontier: list[tuple[int, bytes]] = []  # (level, hash) of the complete subtrees so far

    def entry(self, stored_index: object, kind: object, ref: object, entry: bytes) -> None:
        index, result = self.index, self.result
        if stored_index != index:
            result.differ(index, f"entry {index} is missing from the log (the next stored is {stored_index})")
        if self.rows:  # without them, the log alone: what each entry logs is not asked
            self._logged(index, kind, ref, entry)
        self._leaf(index, entry)
        self.index = index + 1
        if self.index in self.sizes:
            result.roots[self.index] = _fold(self.frontier)

    def _logged(self, index: int, kind: object, ref: object, entry: bytes) -> None:
        if kind == RECORD and type(ref) is int:
            self._record(index, ref, entry)
        elif kind == ACTION and type(ref) is int:
            self._action(index, ref, entry)
        else:
            self.result.differ(index, f"entry {index} has an unknown kind {kind!r} or reference {ref!r}")

    def _record(self, index: int, seq: int, entry: bytes) -> None:
        while self.next_record is not None and self.next_record[0] < seq:
            self.result.differ(index, f"record seq {self.next_record[0]} is in no log entry")
            self.next_record = next(self.records, None)
        if self.next_record is None or self.next_record[0] != seq:
            self.result.differ(index, f"entry {index} logs record seq {seq}, which no longer exists")
            return
        if self.next_record[1] != entry:
            self.result.differ(
                index, f"entry {index} logs record seq {seq}, whose stored content no longer hashes to it"
            )
        self.next_record = next(self.records, None)

    def _action(self, index: int, sequence_no: int, entry: bytes) -> None:
        found = self.waiting.pop(sequence_no, None)
        while found is None and self.next_action is not None and self.next_action[0] <= sequence_no:
            number, recomputed = self.next_action
            if number == sequence_no:
                found = (recomputed, index)
            else:
                self.waiting[number] = (recomputed, index)
            self.next_action = next(self.actions, None)
        if found is None:
            self.result.differ(
                index, f"entry {index} logs action sequence_no {sequence_no}, which is gone or not finished"
            )
        elif found[0] != entry:
            self.result.differ(
                index,
                f"entry {index} logs action sequence_no {sequence_no}, whose stored row no longer"
                f" hashes to it",
            )

    def _leaf(self, index: int, entry: bytes) -> None:
        """Push the leaf, merge equal levels, and hold each node made against the stored one."""
        level, digest, position = 0, leaf_hash(entry), index
        while self.frontier and self.frontier[-1][0] == level:
            digest = node_hash(self.frontier.pop()[1], digest)
            level, position = level + 1, position >> 1
            expected = node_id(level, position)
            while self.next_node is not None and self.next_node[0] < expected:  # type: ignore[operator]
                self.result.tree_matches_entries = False  # a stored node the entries do not make
                self.next_node = next(self.nodes, None)
            if self.next_node is None or self.next_node[0] != expected or self.next_node[1] != digest:
                _tree_mismatch(self.result, position << level, 1 << level)
            else:
                self.next_node = next(self.nodes, None)
        self.frontier.append((level, digest))

    def finish(self) -> ScanResult:
        result, end = self.result, self.index
        result.size = end
        result.root = _fold(self.frontier)
        if self.next_node is not None:
            result.tree_matches_entries = False
        if self.next_record is not None:
            result.differ(end, f"record seq {self.next_record[0]} is in no log entry")
        for sequence_no, (_, passed_at) in sorted(self.waiting.items()):
            result.differ(passed_at, f"action sequence_no {sequence_no} is in no log entry")
        if self.next_action is not None:
            result.differ(end, f"action sequence_no {self.next_action[0]} is in no log entry")
        return result


def _tree_mismatch(result: ScanResult, first_leaf: int, leaves: int) -> None:
    result.tree_matches_entries = False
    if result.first_tree_mismatch is None:
        result.first_tree_mismatch, result.tree_mismatch_leaves = first_leaf, leaves


def _fold(frontier: list[tuple[int, bytes]]) -> bytes:
    if not frontier:
        return EMPTY_ROOT
    digest = frontier[-1][1]
    for _, left in reversed(frontier[:-1]):
        digest = node_hash(left, digest)
    return digest


def _rows(conn: Connection, sql: str) -> Iterator[tuple[object, ...]]:
    cursor = conn.tuples(sql)
    while batch := cursor.fetchmany(_BATCH):
        yield from batch


def _records(conn: Connection) -> Iterator[tuple[int, bytes]]:
    """(seq, entry recomputed from the stored fields) of every record, in seq order."""
    rows = _rows(
        conn,
        "SELECT seq, session_id, kind, content, task_id, agent_id, created_at, prev_hash"
        " FROM thought_records ORDER BY seq",
    )
    for row in rows:
        digest = stored_record_hash(*row)  # type: ignore[arg-type]
        yield row[0], bytes.fromhex(digest)  # type: ignore[misc]


def _actions(conn: Connection) -> Iterator[tuple[int, bytes]]:
    """(sequence_no, entry recomputed from the stored row) of every finished action, in order."""
    columns = {row[0] for row in conn.tuples(conn.dialect.table_columns, ("actions",))}
    principal = "principal" if "principal" in columns else f"'{LOCAL_PRINCIPAL}'"
    rows = _rows(
        conn,
        f"SELECT sequence_no, correlation_id, tool, {principal}, arguments, outcome, result_hash,"
        " started_at, duration_ms FROM actions WHERE outcome != 'running' ORDER BY sequence_no",
    )
    for row in rows:
        yield row[0], stored_action_entry(*row)  # type: ignore[misc]
