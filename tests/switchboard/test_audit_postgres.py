"""The audit store on PostgreSQL (SPEC §15): `"db_url"` with its required signing key; every write goes
through the writer's thread (grouped), eight clients over HTTP at once, and the store then passes
`colibri verify --db-url`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client

from colibri.storage import open_database
from tests.helpers import clean_env, colibri, signing_key
from tests.helpers import postgres as pg
from tests.switchboard.audit_helpers import arguments_column
from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio

CLIENTS, CALLS = 8, 15


async def test_a_postgres_store_takes_concurrent_calls_and_verifies(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> None:
    url = postgres_server.new_database(migrated=False)
    downstreams = Downstreams(tmp_path)
    audit = {"db_url": url, "signing_key": str(signing_key(tmp_path))}
    config = write_config(tmp_path, {"echo": downstreams.fault("echo")}, health=FAST, audit=audit)
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, board)

        async def client(index: int) -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as session:
                await wait_for_state(session, "echo", "HEALTHY")
                for n in range(CALLS):
                    assert not (await session.call_tool("echo.work", {"value": [index, n]})).is_error

        async with anyio.create_task_group() as clients:
            for index in range(CLIENTS):
                clients.start_soon(client, index)
    finally:
        assert stop(board) == 0

    db = open_database(url, readonly=True)
    try:
        rows = db.execute("SELECT arguments, outcome FROM actions WHERE tool = 'echo.work'").fetchall()
        logged = db.execute("SELECT count(*) FROM log_entries WHERE kind = 'action'").fetchone()[0]
        checkpoints = db.execute("SELECT reason FROM log_checkpoints").fetchall()
    finally:
        db.close()
    expected = {arguments_column({"value": [index, n]}) for index in range(CLIENTS) for n in range(CALLS)}
    assert {row[0] for row in rows} == expected and {row[1] for row in rows} == {"ok"}
    assert logged >= len(expected)
    assert [row[0] for row in checkpoints][-1] == "shutdown"
    verified = colibri("verify", "--db-url", url, env=clean_env(tmp_path))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "result:           VALID" in verified.stdout
