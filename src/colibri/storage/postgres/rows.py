"""Rows and cursors of the PostgreSQL backend, shaped like the SQLite backend's.

Domain SQL is written with `?` placeholders (the interface's one style); psycopg wants `%s`
and a literal `%` doubled. `translate` rewrites a statement once and caches it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from functools import lru_cache
from typing import Any, Protocol

import psycopg


class PgRow(tuple[Any, ...]):
    """A tuple that also answers `row["column"]` and `keys()`, like the SQLite backend's rows."""

    _names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._names.index(key))
            except ValueError:
                raise IndexError(f"no column named {key!r}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


def row_factory(cursor: psycopg.Cursor[Any]) -> Callable[[Sequence[Any]], PgRow]:
    return _row_class(tuple(column.name for column in cursor.description or ()))


@lru_cache(maxsize=512)
def _row_class(names: tuple[str, ...]) -> type[PgRow]:
    """One class per column list, made once: making a class per statement cost more than the
    statement's own decoding (measured: about 100 us a query on the 2-core test machine)."""
    kind: type[PgRow] = type("PgRow", (PgRow,), {"_names": names, "__slots__": ()})
    return kind


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """`?` outside quotes becomes `%s`; `%` becomes `%%`."""
    out: list[str] = []
    quote: str | None = None
    for char in sql:
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "?":
            out.append("%s")
            continue
        out.append("%%" if char == "%" else char)
    return "".join(out)


class Owner(Protocol):
    """What a cursor needs of its database: the error mapping, and results still on the way."""

    @property
    def guard(self) -> AbstractContextManager[None]: ...

    def await_results(self) -> None: ...

    def last_serial(self) -> int | None: ...


class PgCursor:
    """A psycopg cursor whose fetches raise `StorageError`s; `lastrowid` as SQLite reports it.

    Inside a write transaction statements are pipelined: a fetch waits for the result (psycopg
    flushes the pipeline), and `rowcount`, which psycopg knows only once the result is in,
    waits for it too.
    """

    __slots__ = ("_cursor", "_owner")

    def __init__(self, cursor: psycopg.Cursor[Any], owner: Owner) -> None:
        self._cursor = cursor
        self._owner = owner

    @property
    def rowcount(self) -> int:
        if self._cursor.pgresult is None:
            self._owner.await_results()
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        """The serial value the last INSERT on this session took (asked only after an INSERT);
        a round trip of its own: prefer `INSERT ... RETURNING`."""
        return self._owner.last_serial()

    def fetchone(self) -> Any:
        with self._owner.guard:
            return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        with self._owner.guard:
            return self._cursor.fetchall()

    def fetchmany(self, size: int) -> list[Any]:
        with self._owner.guard:
            return self._cursor.fetchmany(size)

    def __iter__(self) -> Iterator[Any]:
        # The result is already on the client; fetchall converts it in one call, where iterating
        # the psycopg cursor pays a Python call per row (measured: 3x slower on 20,000 edges).
        with self._owner.guard:
            rows = self._cursor.fetchall()
        yield from rows
