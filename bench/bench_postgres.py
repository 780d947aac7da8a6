"""PostgreSQL: thought_record calls/s with 8 HTTP clients on 1, 2 and 4 replicas of
`colibri serve --http` sharing one database, against 1 process on SQLite in the same run;
and task_next_actions on 10,000 tasks / 20,000 edges on PostgreSQL (target p50 <= 50 ms).

The PostgreSQL server is started for the run the way the test suite starts it
(tests/helpers/postgres.py: initdb + pg_ctl in a temporary folder, fsync off).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from tests.helpers import postgres as pg
from tests.helpers import signing_key

from bench.bench_http import _free_port, _wait, calls_per_second
from bench.bench_tasks import EDGES, TASKS, build_graph
from bench.common import in_process, line, median, percentile
from colibri.domains.tasks.next_actions import next_actions
from colibri.storage import Database, SQLiteDatabase, open_database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS

CLIENTS = 8
REPLICA_COUNTS = (1, 2, 4)


def _env(store: dict[str, str], key: Path) -> dict[str, str]:
    """Replicas on PostgreSQL must all name the same signing key (they refuse to start without)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLIBRI_")}
    env.update(COLIBRI_LOG_LEVEL="warn", COLIBRI_SIGNING_KEY=str(key), **store)
    return env


def _token(env: dict[str, str]) -> str:
    made = subprocess.run(
        [sys.executable, "-m", "colibri", "token", "create", "bench", "--scope", "write"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()


async def _measure(env: dict[str, str], replicas: int) -> float:
    token = _token(env)
    ports = [_free_port() for _ in range(replicas)]
    processes = [
        subprocess.Popen([sys.executable, "-m", "colibri", "serve", "--http", f"127.0.0.1:{port}"], env=env)
        for port in ports
    ]
    try:
        for port, process in zip(ports, processes, strict=True):
            _wait(port, process)
        urls = [f"http://127.0.0.1:{p}/mcp" for p in ports]
        return await calls_per_second(urls, token, "thought_record", CLIENTS)
    finally:
        for process in processes:
            process.terminate()
            process.wait(20)


async def bench_replicas(server: pg.PostgresServer, folder: Path) -> None:
    key = signing_key(folder)
    baseline = await _measure(_env({"COLIBRI_DB_PATH": str(folder / "bench.db")}, key), 1)
    line(f"thought_record, {CLIENTS} HTTP clients, 1 process on SQLite (baseline)", baseline, "calls/s")
    for replicas in REPLICA_COUNTS:
        measured = await _measure(_env({"COLIBRI_DB_URL": server.new_database()}, key), replicas)
        label = f"thought_record, {CLIENTS} HTTP clients, {replicas} replica(s) on PostgreSQL"
        line(label, measured, "calls/s")
        line(f"  ratio to SQLite ({replicas} replica(s))", measured / baseline, "x")


def _next_actions_samples(db: Database) -> list[float]:
    try:
        build_graph(db)
        next_actions(db, 5)
        return in_process(lambda: next_actions(db, 5), 60)
    finally:
        db.close()


def bench_next_actions(server: pg.PostgresServer, folder: Path) -> None:
    """The same graph on both backends in one run: the SQLite figure shows what the PostgreSQL
    round trips and row decoding add to the same Python graph work."""
    sqlite = SQLiteDatabase.open(folder / "graph.db")
    migrate(sqlite, MIGRATIONS)
    on_sqlite = _next_actions_samples(sqlite)
    on_postgres = _next_actions_samples(open_database(server.new_database()))
    label = f"task_next_actions, {TASKS:,} tasks / {EDGES:,} edges"
    line(f"{label}, on SQLite (same run): p50", median(on_sqlite) * 1000, "ms")
    line(f"{label}, on PostgreSQL: p50", median(on_postgres) * 1000, "ms", "<= 50")
    line("task_next_actions on PostgreSQL: p95", percentile(on_postgres, 95) * 1000, "ms")
    line("  PostgreSQL / SQLite p50 ratio", median(on_postgres) / median(on_sqlite), "x")


def main() -> None:
    servers = pg.start()
    server = next(servers)
    try:
        with tempfile.TemporaryDirectory(prefix="colibri-bench-pg-") as tmp:
            bench_next_actions(server, Path(tmp))
            anyio.run(bench_replicas, server, Path(tmp))
    finally:
        servers.close()
