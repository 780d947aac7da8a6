"""Reads awaited on the event loop, on one asyncio connection to the PostgreSQL server.

A request that must read before it is served (its bearer token's check) costs a round trip. Taken
in a worker thread, the hop and the handing of the interpreter lock between that thread and the
loop cost the server more CPU than the query: 1.1 to 1.4 ms a request, measured with 16 clients
calling `thought_record` over HTTP. On an asyncio connection the loop waits for the answer as it
waits for any socket, and the server's own work per request is the query's.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg

from colibri.core.database import Params
from colibri.storage.errors import UnavailableError
from colibri.storage.postgres.errors import convert
from colibri.storage.postgres.link import Backoff, cannot_open, conninfo
from colibri.storage.postgres.rows import translate
from colibri.storage.postgres.urls import redact


class _Lost(UnavailableError):
    """The connection broke under a statement: worth one immediate new attempt, unlike a failed
    connect (the backoff would only refuse it, hiding the driver's reason behind its own)."""


class AsyncReader:
    """Read-only statements on one autocommit connection, opened at first use and opened again
    when found lost, as the backoff allows. psycopg runs one statement at a time on it; callers
    queue."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: psycopg.AsyncConnection[tuple[Any, ...]] | None = None
        self._opening = asyncio.Lock()
        self._backoff = Backoff()

    async def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """The rows of `sql` as tuples. A connection found lost (a server restart, say) is opened
        again at once, once; `StorageError` if the statement still cannot run."""
        try:
            return await self._rows(sql, params)
        except _Lost:
            return await self._rows(sql, params)

    async def _rows(self, sql: str, params: Params) -> list[tuple[Any, ...]]:
        conn = await self._connection()
        try:
            cursor = await conn.execute(translate(sql), params or None)
            return await cursor.fetchall()
        except psycopg.Error as exc:
            if not (conn.broken or conn.closed):
                raise convert(exc) from exc
            if self._conn is conn:  # another caller may have opened the next one already
                self._conn = None
                self._backoff.reset()
            await conn.close()  # as Link.lost does: unclosed, psycopg warns when it is collected
            lost = str(exc).strip() or type(exc).__name__
            raise _Lost(f"the connection to {redact(self.url)} was lost ({lost})") from exc

    async def _connection(self) -> psycopg.AsyncConnection[tuple[Any, ...]]:
        async with self._opening:
            conn = self._conn
            if conn is None or conn.broken or conn.closed:
                if not self._backoff.allows():
                    raise UnavailableError(
                        f"cannot open database {redact(self.url)} now: the last attempt failed; "
                        f"next attempt in {self._backoff.wait():.1f} s"
                    )
                info = conninfo(self.url, readonly=True)
                try:
                    conn = self._conn = await psycopg.AsyncConnection.connect(info, autocommit=True)
                except psycopg.Error as exc:
                    self._backoff.failed()
                    raise cannot_open(self.url, exc) from exc
            return conn

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            try:
                await conn.close()
            except psycopg.Error as exc:
                raise convert(exc) from exc
