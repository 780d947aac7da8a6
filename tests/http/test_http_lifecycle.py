"""Readiness, load and endings of `colibri serve --http`: phase 1, boot failure, 16 clients,
kill -9 mid-burst and a graceful SIGTERM mid-burst."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers import call, ok_data, query
from tests.helpers.lost import lost_connection
from tests.http.helpers import colibri, get, http_client, http_env, make_token, start_server

pytestmark = pytest.mark.anyio

CORRUPT = b"this is not a SQLite database, it is a text file that lost its way\n" * 64


def test_readyz_is_503_in_phase1_then_200_and_healthz_always_200(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    make_token(env, "alice")  # creates and migrates the database
    # A writer holding the database makes phase 2 wait (busy timeout): the server is in phase 1.
    holder = sqlite3.connect(tmp_path / "colibri.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    server = start_server(env, tmp_path)
    try:
        server.wait_listening()
        status, _, body = get(f"{server.base}/readyz")
        assert status == 503 and "starting" in json.loads(body)["reason"]
        assert get(f"{server.base}/healthz")[0] == 200
        holder.execute("COMMIT")
        server.wait_ready()
        status, _, body = get(f"{server.base}/readyz")
        assert status == 200 and json.loads(body) == {"status": "ready", "mode": "FULL"}
    finally:
        holder.close()
        assert server.stop() == 0


def test_readyz_is_503_with_the_reason_after_a_boot_failure(tmp_path: Path) -> None:
    (tmp_path / "colibri.db").write_bytes(CORRUPT)
    server = start_server(http_env(tmp_path), tmp_path)
    try:
        server.wait_listening()
        deadline = time.monotonic() + 15
        while (reason := json.loads(get(f"{server.base}/readyz")[2])["reason"]).startswith("starting"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert get(f"{server.base}/readyz")[0] == 503
        assert reason.startswith("boot failed") and "not a database" in reason
        assert get(f"{server.base}/healthz")[0] == 200
    finally:
        assert server.stop() == 0


CLIENTS, CALLS = 16, 200


async def _mixed_burst(url: str, token: str, index: int, acknowledged: list[str]) -> int:
    """CALLS calls of four kinds; returns how many were answered."""
    answered = 0
    async with http_client(url, token, mode="auto" if index % 2 else "legacy") as client:
        session = ok_data(await call(client, "audit_session_start", {"agent_id": f"c{index}"}))["session_id"]
        for j in range(CALLS):
            kind = j % 4
            if kind == 0:
                args = {"session_id": session, "kind": "observation", "content": f"{index}/{j}"}
                acknowledged.append(ok_data(await call(client, "thought_record", args))["record_id"])
            elif kind == 1:
                ok_data(await call(client, "task_create", {"title": f"{index}/{j}"}))
            elif kind == 2:
                ok_data(await call(client, "task_list", {"limit": 5}))
            else:
                ok_data(await call(client, "server_ping"))
            answered += 1
    return answered


@pytest.mark.slow
async def test_sixteen_clients_two_hundred_calls_each_one_linear_chain(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    tokens = [make_token(env, "team-a"), make_token(env, "team-b")]
    server = start_server(env, tmp_path)
    acknowledged: list[str] = []
    answered: list[int] = []
    try:
        server.wait_ready()

        async def one(index: int) -> None:
            answered.append(await _mixed_burst(server.url, tokens[index % 2], index, acknowledged))

        async with anyio.create_task_group() as tasks:
            for index in range(CLIENTS):
                tasks.start_soon(one, index)
        async with http_client(server.url, tokens[0]) as client:
            chain = ok_data(await call(client, "audit_verify_chain", {}))
    finally:
        assert server.stop() == 0
    db = tmp_path / "colibri.db"
    assert sum(answered) == CLIENTS * CALLS
    records = query(db, "SELECT record_id, seq FROM thought_records ORDER BY seq")
    assert [row["seq"] for row in records] == list(range(1, len(records) + 1))
    assert sorted(row["record_id"] for row in records) == sorted(acknowledged)
    assert len(acknowledged) == CLIENTS * CALLS // 4
    assert chain["valid"] is True and chain["checked"] == len(records)
    outcomes = query(db, "SELECT principal, outcome, COUNT(*) AS n FROM actions GROUP BY principal, outcome")
    counted = {(row["principal"], row["outcome"]): row["n"] for row in outcomes}
    per_token = CLIENTS // 2 * (CALLS + 1)
    assert counted == {("team-a", "ok"): per_token + 1, ("team-b", "ok"): per_token}
    assert colibri("verify", "--db", str(db), env=env).returncode == 0


async def _writer(url: str, token: str, index: int, acknowledged: list[str], failures: list[str]) -> None:
    try:
        async with http_client(url, token) as client:
            session = ok_data(await call(client, "audit_session_start", {"agent_id": f"w{index}"}))
            for j in range(100_000):
                args = {"session_id": session["session_id"], "kind": "plan", "content": f"{index}/{j}"}
                with anyio.fail_after(15):
                    acknowledged.append(ok_data(await call(client, "thought_record", args))["record_id"])
    except Exception as exc:
        if not lost_connection(exc):  # the server goes away under the client: that is the test
            raise
        failures.append(type(exc).__name__)


async def _burst_then(server: Any, token: str, end: Any) -> tuple[list[str], list[str]]:
    acknowledged: list[str] = []
    failures: list[str] = []
    async with anyio.create_task_group() as tasks:
        for index in range(8):
            tasks.start_soon(_writer, server.url, token, index, acknowledged, failures)
        while len(acknowledged) < 200:
            await anyio.sleep(0.05)
        end()
    return acknowledged, failures


@pytest.mark.slow
@pytest.mark.parametrize("ending", ["kill -9", "SIGTERM"])
async def test_every_acknowledged_write_survives_the_end_of_the_server(tmp_path: Path, ending: str) -> None:
    env = http_env(tmp_path)
    token = make_token(env, "writer")
    server = start_server(env, tmp_path)
    server.wait_ready()
    end = server.process.kill if ending == "kill -9" else server.process.terminate
    acknowledged, failures = await _burst_then(server, token, end)
    code = server.process.wait(20)
    assert len(failures) == 8, failures  # every writer saw the server go
    if ending == "SIGTERM":
        assert code == 0, server.log.read_text()
        assert "closing the database" in server.log.read_text()
    else:
        assert code == -9

    db = tmp_path / "colibri.db"
    stored = {row["record_id"] for row in query(db, "SELECT record_id FROM thought_records")}
    assert set(acknowledged) <= stored
    assert colibri("verify", "--db", str(db), env=env).returncode == 0
    restarted = start_server(env, tmp_path)
    try:
        restarted.wait_ready()
        async with http_client(restarted.url, token) as client:
            assert ok_data(await call(client, "audit_verify_chain", {}))["valid"] is True
    finally:
        assert restarted.stop() == 0
    assert not query(db, "SELECT 1 FROM actions WHERE outcome = 'running'")
