"""Faults of a `colibri serve --http` replica on PostgreSQL (SPEC §18): killed inside a grouped
commit, its database connection dropped mid-burst, the database unreachable for a while.

Every acknowledged write stays, the chain and the log keep no gap and verify, a call that met
the fault is refused with `retryable: true`, and `/readyz` says 503 while the connection is lost.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest

from tests.helpers import call, colibri, ok_data
from tests.helpers import postgres as pg
from tests.helpers.lost import lost_connection
from tests.http.helpers import HttpServer, get, http_client, http_env, make_token, start_server

pytestmark = pytest.mark.anyio

CLIENTS = 16


def _rows(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql, params))


def _dbname(url: str) -> str:
    return url.rsplit("/", 1)[1]


def _check_store(url: str, env: dict[str, str], acknowledged: set[str]) -> None:
    seqs = [row[0] for row in _rows(url, "SELECT seq FROM thought_records ORDER BY seq")]
    assert seqs == list(range(1, len(seqs) + 1)), "one linear chain: seq 1..n with no gap"
    indexes = [row[0] for row in _rows(url, "SELECT idx FROM log_entries ORDER BY idx")]
    assert indexes == list(range(len(indexes))), "one log: entries 0..m-1 with no gap"
    stored = {row[0] for row in _rows(url, "SELECT record_id FROM thought_records")}
    assert acknowledged <= stored, f"{len(acknowledged - stored)} acknowledged record(s) lost"
    running = _rows(url, "SELECT count(*) FROM actions WHERE outcome = 'running'")[0][0]
    assert running == 0, "a write call's row is committed with its outcome or not at all"
    verified = colibri("verify", "--db-url", url, env={**env, "COLIBRI_DB_URL": url})
    assert verified.returncode == 0 and "VALID" in verified.stdout, verified.stdout + verified.stderr


def _team_replica(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> tuple[str, dict[str, str], str, HttpServer]:
    """A replica on a database of its own, with a token named `team` (not yet waited for)."""
    url = postgres_server.new_database()
    env = http_env(tmp_path, COLIBRI_DB_URL=url)
    token = make_token(env, "team")
    return url, env, token, start_server(env, tmp_path)


async def _writer(
    server: HttpServer, token: str | None, index: int, acknowledged: set[str], stop: anyio.Event
) -> None:
    """Records into its own session until `stop`, retrying a call refused as retryable."""
    async with http_client(server.url, token) as client:
        session = ok_data(await call(client, "audit_session_start", {"agent_id": f"w{index}"}))["session_id"]
        n = 0
        while not stop.is_set():
            args = {"session_id": session, "kind": "observation", "content": f"{index}/{n}"}
            reply = await call(client, "thought_record", args)
            if reply.get("ok") is False:
                assert reply["error"]["details"].get("retryable") is True, reply
                await anyio.sleep(0.05)
                continue
            acknowledged.add(reply["data"]["record_id"])
            n += 1


@pytest.mark.slow
async def test_a_replica_killed_inside_a_grouped_commit_loses_no_acknowledged_write(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> None:
    url, env, token, server = _team_replica(tmp_path, postgres_server)
    acknowledged: set[str] = set()
    stop = anyio.Event()
    try:
        server.wait_ready()

        async def guarded(index: int) -> None:
            try:
                await _writer(server, token, index, acknowledged, stop)
            except Exception as exc:
                if not lost_connection(exc):  # the writers of a killed replica lose it: that is the test
                    raise

        async with anyio.create_task_group() as tasks:
            for index in range(CLIENTS):
                tasks.start_soon(guarded, index)
            with anyio.fail_after(60):
                while len(acknowledged) < 300:
                    await anyio.sleep(0.05)
                # A backend with a transaction id is one that has written in its open transaction:
                # the replica is inside a batch (the token checks only read).
                while not _rows(
                    postgres_server.url(),
                    "SELECT 1 FROM pg_stat_activity WHERE datname = %s AND backend_xid IS NOT NULL",
                    (_dbname(url),),
                ):
                    await anyio.sleep(0)
            server.process.kill()
            seen_before_kill = set(acknowledged)
            stop.set()
        assert server.process.wait(20) == -9
    finally:
        if server.process.poll() is None:
            server.process.kill()
    assert len(seen_before_kill) >= 300
    _check_store(url, env, acknowledged)


@pytest.mark.slow
async def test_a_connection_dropped_mid_burst_is_survived(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> None:
    url, env, token, server = _team_replica(tmp_path, postgres_server)
    acknowledged: set[str] = set()
    stop = anyio.Event()
    try:
        server.wait_ready()
        async with anyio.create_task_group() as tasks:
            for index in range(CLIENTS // 2):
                tasks.start_soon(_writer, server, token, index, acknowledged, stop)
            with anyio.fail_after(120):
                for drop in range(3):
                    while len(acknowledged) < 100 * (drop + 1):
                        await anyio.sleep(0.05)
                    # Every connection of the replica (its calls' and its token checks'), mid-burst.
                    postgres_server.admin(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        f" WHERE datname = '{_dbname(url)}' AND application_name = 'colibri'"
                    )
                while len(acknowledged) < 400:
                    await anyio.sleep(0.05)
            stop.set()
        assert server.process.poll() is None, "the replica survived"
        assert get(f"{server.base}/readyz")[0] == 200
    finally:
        assert server.stop() == 0
    _check_store(url, env, acknowledged)


@pytest.mark.slow
async def test_readyz_is_503_while_the_database_is_out_of_reach(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> None:
    url = postgres_server.new_database()
    name = _dbname(url)
    env = http_env(tmp_path, COLIBRI_DB_URL=url)
    server = start_server(env, tmp_path, "--no-auth")
    try:
        server.wait_ready()
        async with http_client(server.url, None) as client:
            session = ok_data(await call(client, "audit_session_start", {}))["session_id"]
            args = {"session_id": session, "kind": "plan", "content": "before"}
            ok_data(await call(client, "thought_record", args))
            postgres_server.admin(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
            try:
                postgres_server.admin(
                    f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
                )
                refused = await call(client, "thought_record", {**args, "content": "during"})
                assert refused["error"]["code"] == "HANDLER_ERROR", refused
                assert refused["error"]["details"] == {"retryable": True}
                assert "nothing was written" in refused["error"]["message"]
                status, _, body = get(f"{server.base}/readyz")
                assert status == 503 and "connection was lost" in json.loads(body)["reason"], body
            finally:
                postgres_server.admin(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
            deadline = time.monotonic() + 20
            while get(f"{server.base}/readyz")[0] != 200:  # back without any call to bring it
                assert time.monotonic() < deadline, "never reconnected"
                await anyio.sleep(0.05)
            ok_data(await call(client, "thought_record", {**args, "content": "after"}))
    finally:
        assert server.stop() == 0
    contents = [row[0] for row in _rows(url, "SELECT content FROM thought_records ORDER BY seq")]
    assert contents == ["before", "after"]
