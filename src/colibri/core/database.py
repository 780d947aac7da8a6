"""The storage interface: what domains, the chain and the runtime may ask of a database.

Domains are written against these protocols, never against a driver. `storage/` holds the
implementations (SQLite today; another backend implements the same protocols and a
`Dialect`), and converts every driver error into the `StorageError` tree of
`storage/errors.py`, so nothing above storage ever sees a driver exception.

Connection   execute / executemany / tuples, and the backend's `dialect`
└── Database atomic (nested transactions), snapshot (consistent reads), lifecycle
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

Params = Sequence[Any]


class Row(Protocol):
    """One result row: by position (`row[0]`) or by column name (`row["id"]`)."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def __len__(self) -> int: ...

    def keys(self) -> list[str]: ...


class Cursor(Protocol):
    """The outcome of one statement: its rows, and for writes `rowcount` / `lastrowid`."""

    @property
    def rowcount(self) -> int: ...

    @property
    def lastrowid(self) -> int | None: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Dialect(Protocol):
    """SQL that differs between backends, by name; each backend has one dialect module."""

    name: str
    table_exists: str  # one row when the table named by its one parameter exists
    applied_migrations: str  # names in schema_migrations, in the order they were applied
    table_columns: str  # one row per column of the table named by its one parameter; the name first

    like: str  # the operator matching a LIKE pattern case-insensitively (ASCII letters at least)
    # True where, inside a write transaction, a statement is sent without waiting and reading its
    # result later costs nothing more (PostgreSQL's pipeline); False where results must be read
    # before the next statement runs (SQLite: a statement not read to its end blocks a SAVEPOINT).
    pipelined: bool

    def next_id(self, table: str, key: str) -> str:
        """One row, one column, no parameter: the number the auto-increment `key` of `table`
        gives next (call inside the write transaction, whose lock keeps it unclaimed)."""
        ...

    def continue_counter(self, table: str, key: str) -> str | None:
        """After rows were inserted with explicit keys: the statement that makes the auto-increment
        `key` of `table` continue after them, or None where the database does so itself."""
        ...

    def next_serials(self, table: str, key: str) -> str | None:
        """One `?` parameter, a count: a statement giving that many fresh numbers of the
        auto-increment `key` of `table`, one a row, increasing; None where numbers are not taken
        ahead (SQLite: an INSERT's own number costs nothing to read there)."""
        ...

    def json_array_contains(self, column: str) -> str:
        """A condition, one `?` parameter: the JSON array in `column` holds that value."""
        ...

    def as_bytes(self, expression: str) -> str:
        """`expression` read as raw bytes, whatever was stored there."""
        ...

    def joined(self, expression: str, separator: str) -> str:
        """An aggregate: the text values of `expression` over the rows, in no set order, joined
        with `separator` (a literal); NULL when there is no row."""
        ...


class Connection(Protocol):
    """Statements with bound parameters. Rows from `execute` are `Row`s; `tuples` gives plain
    tuples, cheaper where a query reads many rows."""

    @property
    def dialect(self) -> Dialect: ...

    def execute(self, sql: str, params: Params = ()) -> Cursor: ...

    def executemany(self, sql: str, params: Iterable[Params]) -> Cursor: ...

    def tuples(self, sql: str, params: Params = ()) -> Cursor: ...

    @property
    def memo(self) -> dict[str, Any]:
        """Values this write transaction already knows (storage/memo.py): kept until it ends,
        restored when a savepoint rolls back. Outside a write transaction, a fresh empty dict."""
        ...

    @property
    def hints(self) -> dict[str, Any]:
        """What earlier transactions knew; to be checked against the database before use."""
        ...


class Database(Connection, Protocol):
    """One open database: a connection plus transactions and a lifecycle."""

    path: Path
    readonly: bool

    @property
    def target(self) -> str:
        """What `storage.open_database` takes to open this same store again (a path or a URL)."""
        ...

    @property
    def in_transaction(self) -> bool: ...

    def atomic(self) -> AbstractContextManager[Connection]:
        """All or nothing; the outermost level serialises writers, inner levels nest."""
        ...

    def careful(self) -> AbstractContextManager[None]:
        """Inside, releasing a savepoint directly inside the transaction waits for the results of
        its statements, so an error is raised (and rolled back) in the savepoint that caused it.
        Outside, where statements are pipelined, such an error may surface later and fail the
        whole transaction instead; SQLite always reports it at once."""
        ...

    @property
    def errors_deferred(self) -> bool:
        """True inside a write transaction whose statements are pipelined, outside `careful()`: an
        error surfaces later and fails the whole transaction, which the chain then runs again
        carefully (chain/group.py), so a check the database makes at an insert can stand in for a
        read. Always False on SQLite."""
        ...

    def snapshot(self) -> AbstractContextManager[Connection]:
        """Several reads that see one consistent state; takes no write lock."""
        ...

    def without_waiting(self) -> AbstractContextManager[bool]:
        """Yields whether this store can refuse to wait: then, inside, an outermost `atomic()` that
        would wait for another writer raises `WouldWait` before anything begins."""
        ...

    def user_table_count(self) -> int: ...

    def unavailable(self) -> str | None:
        """Why the store cannot be used right now (its server connection was lost and is not back
        yet), or None. Never blocks."""
        ...

    def reconnect(self) -> bool:
        """Try to get a lost connection back, no sooner than its backoff allows; True once usable."""
        ...

    def checkpoint_in_background(self) -> None: ...

    def close(self) -> None: ...
