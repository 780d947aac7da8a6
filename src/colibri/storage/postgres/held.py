"""The verifiable log's inserts of a pipelined write transaction, held and sent as one statement.

Every call of a batch appends two log entries (its thought record's and its action's), each an
INSERT into `log_entries` and, on average, one into `log_nodes` (domains/log/tree.py): four of the
nine statements a call costs, each one psycopg builds, sends and reads the result of. Nothing in
the transaction reads those rows back: the log's tail (order, indexes, tree) is computed from the
transaction's in-memory tail under the advisory lock, and receipts from the same values. So while
errors are deferred anyway (database.errors_deferred: pipelined, outside careful()), their rows are
held here and sent as ONE statement (arrays unnested, one constant text, prepared once) just before
COMMIT, and before any statement that names either table (a proof or an approval reading the log
inside the transaction sees its rows). A savepoint marks how many were held when it was made:
rolling back to it forgets those held since, as the server forgets the rows written since.

The thought chain's anchor (`trail_head`, domains/trail/repository.py) is updated by every record to
the record's seq and hash: only the last value of a transaction stays, so it is held the same way
and goes out with the log's rows (nothing reads it back either: the head is remembered in the
transaction, and a statement naming the table sends it first).

What the log guarantees does not change: the same rows, in the same transaction, under the same
lock, committed or rolled back with it. An error of the held rows (a duplicate index, say) fails
the transaction as any deferred error does (errors.Failures), and the chain reruns its calls
carefully, where nothing is held and each insert runs where it is made.
"""

from __future__ import annotations

from typing import Any, Final

# domains/log/tree.py's statements, word for word (translated to psycopg's placeholders): any
# other text runs as before, so a change there costs the saving, never the rows.
ENTRY: Final = "INSERT INTO log_entries (idx, kind, ref, entry_hash) VALUES (%s, %s, %s, %s)"
NODE: Final = "INSERT INTO log_nodes (id, hash) VALUES (%s, %s)"
HEAD: Final = "UPDATE trail_head SET seq = %s, hash = %s WHERE id = 1"
BOTH: Final = (
    "WITH entries AS (INSERT INTO log_entries (idx, kind, ref, entry_hash)"
    " SELECT * FROM unnest(%s::bigint[], %s::text[], %s::bigint[], %s::bytea[])),"
    " nodes AS (INSERT INTO log_nodes (id, hash) SELECT * FROM unnest(%s::bigint[], %s::bytea[]))"
    " UPDATE trail_head SET seq = %s, hash = %s WHERE id = 1 AND %s::bigint IS NOT NULL"
)
_NO_HEAD: Final = (None, None)


class HeldLog:
    """The log rows of the open transaction not sent yet, column by column."""

    __slots__ = ("_entries", "_head", "_marks", "_nodes")

    def __init__(self) -> None:
        self._entries: tuple[list[Any], ...] = ([], [], [], [])
        self._nodes: tuple[list[Any], ...] = ([], [])
        self._head: tuple[Any, Any] = _NO_HEAD  # the anchor's last (seq, hash), not sent yet
        # Rows and anchor held when each open savepoint was made.
        self._marks: list[tuple[int, int, tuple[Any, Any]]] = []

    def mark(self) -> None:
        """A savepoint was made."""
        self._marks.append((len(self._entries[0]), len(self._nodes[0]), self._head))

    def release(self) -> None:
        """The innermost savepoint was released: what it held stays held by the one around it."""
        self._marks.pop()

    def rollback(self) -> None:
        """The innermost savepoint was rolled back to (and released): its rows are gone."""
        entries, nodes, self._head = self._marks.pop()
        for column in self._entries:
            del column[entries:]
        for column in self._nodes:
            del column[nodes:]

    def hold(self, sql: str, params: Any) -> bool:
        """Keep the row when `sql` is one of the log's inserts (True), else leave it to run."""
        if sql == HEAD and len(params) == 2:
            self._head = (params[0], params[1])
            return True
        columns = self._entries if sql == ENTRY else self._nodes if sql == NODE else None
        if columns is None or len(params) != len(columns):
            return False
        for column, value in zip(columns, params, strict=True):
            column.append(value)
        return True

    @property
    def pending(self) -> bool:
        return bool(self._entries[0] or self._nodes[0]) or self._head[0] is not None

    @staticmethod
    def names_log(sql: str) -> bool:
        """Whether `sql` reads or writes the log's tables: the rows held must be sent first."""
        return "log_entries" in sql or "log_nodes" in sql or "trail_head" in sql

    def take(self) -> tuple[Any, ...] | None:
        """The one statement's parameters for every row held (None: nothing held); held no more."""
        if not self.pending:
            return None
        params = (*self._entries, *self._nodes, *self._head, self._head[0])
        self._entries, self._nodes, self._head = ([], [], [], []), ([], []), _NO_HEAD
        self._marks = [(0, 0, _NO_HEAD)] * len(self._marks)  # sent: a rollback undoes them on the server
        return params

    def drop(self) -> None:
        """The transaction ended: whatever it held is nobody's."""
        self._entries, self._nodes, self._marks, self._head = ([], [], [], []), ([], []), [], _NO_HEAD
