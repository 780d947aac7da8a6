"""The PostgreSQL backend's own guarantees: read-only means no write, errors mapped, writers serialised."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
import pytest

from colibri.storage import errors, open_database
from tests.helpers import call, clean_env, connect, ok_data
from tests.helpers import postgres as pg

TABLES = ("tasks", "task_history", "thought_records", "audit_sessions", "session_seals", "actions")


def _writes(server: pg.PostgresServer, url: str) -> tuple[int, ...]:
    """Rows inserted, updated and deleted in that database since the server started (all backends)."""
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(server.url()) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT tup_inserted, tup_updated, tup_deleted, xact_commit FROM pg_stat_database"
            " WHERE datname = %s",
            (name,),
        ).fetchone()
    assert row is not None
    return tuple(row[:3])


def _wait_for_backends_to_exit(server: pg.PostgresServer, url: str, timeout: float = 60.0) -> None:
    """Wait until no backend is connected to the database: a backend flushes its statistics as it
    exits (before it leaves pg_stat_activity), otherwise at most once a second."""
    name = url.rsplit("/", 1)[1]
    deadline = time.monotonic() + timeout
    with psycopg.connect(server.url(), autocommit=True) as conn:
        while True:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (name,)).fetchone()
            if row is not None and row[0] == 0:
                return
            assert time.monotonic() < deadline, f"{row[0] if row else '?'} backend(s) still on {name}"
            time.sleep(0.02)  # polling a condition: the backends gone


def _counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}  # type: ignore[index]


pytestmark = pytest.mark.anyio


async def test_readonly_on_postgres_reads_everything_and_writes_nothing(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> None:
    url = postgres_server.new_database()
    env = clean_env(tmp_path, COLIBRI_DB_URL=url)
    async with connect(env) as client:
        ok_data(await call(client, "task_create", {"title": "first"}))
        session = ok_data(await call(client, "audit_session_start", {}))["session_id"]
        ok_data(await call(client, "thought_record", {"session_id": session, "kind": "plan", "content": "x"}))
        ok_data(await call(client, "merkle_finalize", {"session_id": session}))
    _wait_for_backends_to_exit(postgres_server, url)
    counts = _counts(url)
    _wait_for_backends_to_exit(postgres_server, url)
    writes = _writes(postgres_server, url)

    async with connect({**env, "COLIBRI_MODE": "READONLY"}) as client:
        assert ok_data(await call(client, "task_get", {"task_id": "T-1"}))["title"] == "first"
        assert ok_data(await call(client, "audit_verify_chain", {}))["valid"] is True
        listed = ok_data(await call(client, "thought_record_list", {"session_id": session}))
        assert len(listed["records"]) == 1
        ok_data(await call(client, "task_next_actions", {}))
    _wait_for_backends_to_exit(postgres_server, url)
    assert _counts(url) == counts
    _wait_for_backends_to_exit(postgres_server, url)
    assert _writes(postgres_server, url) == writes


def test_a_write_on_a_read_only_open_is_a_read_only_error(postgres_server: pg.PostgresServer) -> None:
    url = postgres_server.new_database()
    db = open_database(url, readonly=True)
    try:
        with pytest.raises(errors.ReadOnlyError) as caught:
            db.execute("UPDATE trail_head SET seq = 5")
        assert isinstance(caught.value.__cause__, psycopg.Error)
        with pytest.raises(errors.ReadOnlyError), db.atomic() as conn:
            conn.execute("DELETE FROM tasks")
        assert db.execute("SELECT seq FROM trail_head").fetchone()[0] == 0
    finally:
        db.close()


def test_driver_errors_become_the_storage_error_tree(postgres_server: pg.PostgresServer) -> None:
    with pytest.raises(errors.UnavailableError, match="no_such_db"):
        open_database(postgres_server.url("no_such_db"))
    db = open_database(postgres_server.new_database())
    try:
        with pytest.raises(errors.IntegrityError):
            db.execute("INSERT INTO trail_head (id, seq, hash) VALUES (1, 0, 'x')")
        with pytest.raises(errors.OperationalError):
            db.execute("SELECT * FROM no_such_table")
        assert db.execute("SELECT count(*) FROM trail_head").fetchone()[0] == 1
    finally:
        db.close()


def test_write_transactions_of_two_connections_run_one_at_a_time(postgres_server: pg.PostgresServer) -> None:
    """The second writer is seen waiting for the first's lock (in pg_locks) while the first holds
    it, and goes on only after the first commits: the two provably overlap."""
    url = postgres_server.new_database()
    first, second = open_database(url), open_database(url)
    order: list[str] = []
    both_started = threading.Barrier(2, timeout=30)

    def other() -> None:
        both_started.wait()  # the first writer is inside its transaction, holding the lock
        with second.atomic() as conn:
            conn.execute("SELECT 1").fetchone()
            order.append("second")

    thread = threading.Thread(target=other)
    thread.start()
    try:
        with first.atomic() as conn:
            # Statements are pipelined: the lock is taken with the transaction's first round trip.
            conn.execute("SELECT 1").fetchone()
            both_started.wait()
            _wait_for_a_lock_waiter(postgres_server, url)
            order.append("first")
        thread.join(30)
        assert not thread.is_alive()
        assert order == ["first", "second"]
    finally:
        first.close()
        second.close()


def _wait_for_a_lock_waiter(server: pg.PostgresServer, url: str, timeout: float = 30.0) -> None:
    """Wait until a backend of the database waits for an advisory lock it was not granted."""
    name = url.rsplit("/", 1)[1]
    deadline = time.monotonic() + timeout
    with psycopg.connect(server.url(), autocommit=True) as conn:
        while not conn.execute(
            "SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
            " WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = %s",
            (name,),
        ).fetchone():
            assert time.monotonic() < deadline, "the second writer never waited for the first's lock"
            time.sleep(0.02)  # polling a condition: the waiting lock
