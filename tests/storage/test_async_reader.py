"""The PostgreSQL reads awaited on the event loop (the bearer-token check's): rows, errors mapped,
a lost connection opened again at once, a database out of reach refused with a clear error."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from colibri.domains import access
from colibri.storage import async_reader, errors, open_database
from colibri.storage.postgres.reader import AsyncReader
from tests.helpers import postgres as pg

pytestmark = pytest.mark.anyio


def _made_token(url: str, name: str) -> str:
    db = open_database(url)
    try:
        return access.create(db, name, access.Scope.WRITE, None, 0.0)
    finally:
        db.close()


async def test_reads_the_active_tokens_a_presented_token_is_matched_against(
    postgres_server: pg.PostgresServer,
) -> None:
    url = postgres_server.new_database()
    token = _made_token(url, "alice")
    reader = async_reader(url)
    try:
        rows = await reader.rows(access.ACTIVE_TOKENS)
        again = await reader.rows("SELECT name FROM access_tokens WHERE name = ?", ("alice",))
    finally:
        await reader.aclose()
    info = access.match(token, rows, 1.0)
    assert info is not None and info.name == "alice" and info.scope is access.Scope.WRITE
    assert access.match(token[:-1] + "x", rows, 1.0) is None
    assert again == [("alice",)]


async def test_a_lost_connection_is_opened_again_at_once(postgres_server: pg.PostgresServer) -> None:
    url = postgres_server.new_database()
    reader = async_reader(url)
    try:
        ((first,),) = await reader.rows("SELECT pg_backend_pid()")
        postgres_server.admin(f"SELECT pg_terminate_backend({first})")
        ((second,),) = await reader.rows("SELECT pg_backend_pid()")
    finally:
        await reader.aclose()
    assert second != first


async def test_statement_errors_are_storage_errors_and_the_connection_stays(
    postgres_server: pg.PostgresServer,
) -> None:
    url = postgres_server.new_database()
    reader = async_reader(url)
    try:
        with pytest.raises(errors.OperationalError, match="no_such_table"):
            await reader.rows("SELECT * FROM no_such_table")
        with pytest.raises(errors.ReadOnlyError):
            await reader.rows("DELETE FROM access_tokens")
        assert await reader.rows("SELECT 1") == [(1,)]
    finally:
        await reader.aclose()


async def test_a_database_out_of_reach_is_unavailable_named_and_tried_again_after_a_backoff(
    postgres_server: pg.PostgresServer,
) -> None:
    url = postgres_server.new_database()
    name = url.rsplit("/", 1)[1]
    reader = async_reader(url)
    postgres_server.admin(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
    try:
        with pytest.raises(errors.UnavailableError, match=f"cannot open database .*{name}") as first:
            await reader.rows("SELECT 1")
        # The first refusal carries the server's own reason, not the backoff's.
        assert "not currently accepting connections" in str(first.value), first.value
        # Right after a failed attempt the next waits its turn instead of trying again at once.
        with pytest.raises(errors.UnavailableError, match="next attempt in"):
            await reader.rows("SELECT 1")
    finally:
        postgres_server.admin(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
    try:
        with anyio.fail_after(10):
            while (answer := await _unless_held_back(reader)) is None:
                await anyio.sleep(0.05)
    finally:
        await reader.aclose()
    assert answer == [(1,)]


async def _unless_held_back(reader: AsyncReader) -> list[tuple[Any, ...]] | None:
    """`SELECT 1`'s rows, or None while the backoff holds the next attempt back."""
    try:
        return await reader.rows("SELECT 1")
    except errors.UnavailableError as refused:
        if "next attempt in" not in str(refused):
            raise
        return None
