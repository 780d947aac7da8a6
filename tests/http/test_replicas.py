"""Four `colibri serve --http` replicas on one PostgreSQL database: one chain, one winner per race.

16 clients spread over the replicas make 200 mixed calls each (thought records into sessions
shared across replicas, task creates, `expected_version` races on shared tasks, reads), then
seal their own sessions. A second burst kills two replicas with SIGKILL mid-way: everything
acknowledged is still there and the chain still verifies.
"""

from __future__ import annotations

from typing import Any

import anyio
import psycopg
import pytest

from tests.helpers import call, domain_error, ok_data
from tests.helpers import postgres as pg
from tests.helpers.lost import lost_connection
from tests.http.helpers import HttpServer, colibri, http_client, http_env, make_token, start_server

pytestmark = pytest.mark.anyio

REPLICAS, CLIENTS, CALLS, RACES = 4, 16, 200, 50


def _rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql))


class Tally:
    def __init__(self) -> None:
        self.records: list[str] = []
        self.tasks: list[str] = []
        self.wins: dict[str, list[int]] = {}
        self.conflicts = 0
        self.answered = 0
        self.failures: list[str] = []


async def _client(
    server: HttpServer, token: str, index: int, shared: list[str], races: list[str], *, t: Tally
) -> None:
    async with http_client(server.url, token) as client:
        own = ok_data(await call(client, "audit_session_start", {"agent_id": f"c{index}"}))["session_id"]
        for j in range(CALLS):
            kind = j % 4
            if kind == 0:
                session = shared[index % len(shared)] if j % 8 == 0 else own
                args = {"session_id": session, "kind": "observation", "content": f"{index}/{j}"}
                t.records.append(ok_data(await call(client, "thought_record", args))["record_id"])
            elif kind == 1:
                t.tasks.append(ok_data(await call(client, "task_create", {"title": f"{index}/{j}"}))["id"])
            elif kind == 2:
                race = races[j // 4 % len(races)]
                args = {"task_id": race, "expected_version": 1, "title": f"won by {index}"}
                reply = await call(client, "task_update", args)
                if reply["data"].get("ok") is False:
                    assert domain_error(reply)["code"] == "ERR_CONFLICT"
                    t.conflicts += 1
                else:
                    t.wins.setdefault(race, []).append(index)
            else:
                ok_data(await call(client, "task_list", {"limit": 5}))
            t.answered += 1
        sealed = ok_data(await call(client, "merkle_finalize", {"session_id": own}))
        assert sealed["session_id"] == own


def _check_store(url: str, env: dict[str, str], t: Tally) -> None:
    seqs = [row[0] for row in _rows(url, "SELECT seq FROM thought_records ORDER BY seq")]
    assert seqs == list(range(1, len(seqs) + 1)), "one linear chain: seq 1..n with no gap"
    indexes = [row[0] for row in _rows(url, "SELECT idx FROM log_entries ORDER BY idx")]
    assert indexes == list(range(len(indexes))), "one log: entries 0..m-1 with no gap"
    logged = {row[0] for row in _rows(url, "SELECT ref FROM log_entries WHERE kind = 'record'")}
    assert logged == set(seqs), "every record is a log entry"
    stored = {row[0] for row in _rows(url, "SELECT record_id FROM thought_records")}
    assert set(t.records) <= stored
    tasks = {row[0] for row in _rows(url, "SELECT id FROM tasks")}
    assert set(t.tasks) <= tasks
    numbers = [row[0] for row in _rows(url, "SELECT number FROM tasks ORDER BY number")]
    assert numbers == list(range(1, len(numbers) + 1)), "task numbers: no gap, no duplicate"
    for race, winners in t.wins.items():
        assert len(winners) == 1, f"{race} had {len(winners)} winners"
    updates = _rows(
        url, "SELECT task_id, count(*) FROM task_history WHERE event = 'updated' GROUP BY task_id"
    )
    assert all(count == 1 for _, count in updates), "each race task was updated once at most"
    titles = dict(_rows(url, "SELECT id, title FROM tasks WHERE version = 2"))
    for race, (winner,) in t.wins.items():
        assert titles[race] == f"won by {winner}"
    verified = colibri("verify", "--db-url", url, env={**env, "COLIBRI_DB_URL": url})
    assert verified.returncode == 0 and "VALID" in verified.stdout, verified.stdout + verified.stderr


async def _burst(
    servers: list[HttpServer], token: str, races: list[str], t: Tally, kill_after: int | None
) -> None:
    async with http_client(servers[0].url, token) as client:
        shared = [
            ok_data(await call(client, "audit_session_start", {"agent_id": f"shared{k}"}))["session_id"]
            for k in range(4)
        ]

    async def guarded(index: int) -> None:
        try:
            await _client(servers[index % len(servers)], token, index, shared, races, t=t)
        except Exception as exc:
            if not lost_connection(exc):  # clients of a killed replica lose it: that is the test
                raise
            t.failures.append(f"{index}: {type(exc).__name__}")

    async with anyio.create_task_group() as tasks:
        for index in range(CLIENTS):
            tasks.start_soon(guarded, index)
        if kill_after is not None:
            while t.answered < kill_after:
                await anyio.sleep(0.05)
            for victim in servers[2:]:
                victim.process.kill()


@pytest.mark.slow
async def test_four_replicas_share_one_chain_and_races_have_one_winner(
    tmp_path: Any, postgres_server: pg.PostgresServer
) -> None:
    url = postgres_server.new_database()
    env = http_env(tmp_path, COLIBRI_DB_URL=url)
    token = make_token(env, "team")
    servers = [start_server(env, tmp_path) for _ in range(REPLICAS)]
    try:
        for server in servers:
            server.wait_ready()
        async with http_client(servers[1].url, token) as client:
            races = [
                ok_data(await call(client, "task_create", {"title": f"race {k}"}))["id"] for k in range(RACES)
            ]
        calm = Tally()
        await _burst(servers, token, races, calm, None)
        assert calm.failures == [] and calm.answered == CLIENTS * CALLS
        assert len(calm.wins) == RACES and calm.conflicts == CLIENTS * CALLS // 4 - RACES
        _check_store(url, env, calm)
        sealed = _rows(url, "SELECT count(*) FROM session_seals")[0][0]
        assert sealed == CLIENTS

        # Second burst on fresh races: two replicas die by SIGKILL mid-way.
        async with http_client(servers[0].url, token) as client:
            races = [
                ok_data(await call(client, "task_create", {"title": f"race b{k}"}))["id"]
                for k in range(RACES)
            ]
        stormy = Tally()
        await _burst(servers, token, races, stormy, kill_after=CLIENTS * CALLS // 4)
        assert [server.process.wait(20) for server in servers[2:]] == [-9, -9]
        assert len(stormy.failures) == CLIENTS // 2, stormy.failures  # the clients of the two dead ones
        _check_store(url, env, stormy)
    finally:
        # Every replica is stopped before any exit code is judged, so a failure leaves none running.
        for server in servers[2:]:
            if server.process.poll() is None:
                server.process.kill()
        codes = [server.stop() for server in servers[:2]]
        assert codes == [0, 0]
