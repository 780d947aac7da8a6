"""The SQLite backend's cursor: sqlite3's, with every fetch's errors mapped."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from colibri.storage.sqlite.errors import convert, map_exceptions


class SQLiteCursor:
    """A sqlite3 cursor whose fetches raise `StorageError`s."""

    __slots__ = ("_cursor",)

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    def fetchone(self) -> Any:
        try:  # not `with map_exceptions`: most statements' one fetch, kept as cheap as a try is
            return self._cursor.fetchone()
        except sqlite3.Error as exc:
            raise convert(exc) from exc

    def fetchall(self) -> list[Any]:
        with map_exceptions:
            return self._cursor.fetchall()

    def fetchmany(self, size: int) -> list[Any]:
        with map_exceptions:
            return self._cursor.fetchmany(size)

    def __iter__(self) -> Iterator[Any]:
        with map_exceptions:
            yield from self._cursor
