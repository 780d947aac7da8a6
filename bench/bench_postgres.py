"""PostgreSQL at team scale (SPEC §18), every setup in the same run:

- thought_record calls/s with 16 HTTP clients (bearer tokens on) for BENCH_PG_SECONDS (8) per
  setup: one `colibri serve --http` on SQLite (the baseline), and 1, 2 and 4 replicas sharing
  one PostgreSQL database. The setups take turns for BENCH_PG_ROUNDS (3) rounds, the order
  reversed every other round, and each figure is the median over the rounds, a ratio the median
  of the rounds' ratios: one window per setup, one after the other, gave 0.89 to 1.35 for
  4 replicas against 1 over six runs, as the machine's load drifted between the windows.
  Targets: 1 replica >= 1.0x SQLite; 4 replicas >= 1 replica.
- statements per call, from the server's own statistics (pg_stat_statements, reset at the
  start of each timed window; every statement of the database counts, token checks included);
- the same write with 1 ms added between the replica and the database (a TCP proxy that holds
  each answer 1 ms: bench/latency_proxy.py), one replica: writes/s (target >= 300) and round
  trips per call as the proxy counted them (each time the replica waited for the server);
- task_next_actions on 10,000 tasks / 20,000 edges: p50 with an unchanged board (target
  <= 50 ms) and p50 when a task changed since the previous call (the board read again).

The PostgreSQL server is started for the run the way the test suite starts it
(tests/helpers/postgres.py: initdb + pg_ctl in a temporary folder, fsync and synchronous_commit
off, as SQLite's synchronous=NORMAL does not wait for the disk either), with pg_stat_statements.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from tests.helpers import postgres as pg
from tests.helpers import signing_key

from bench.bench_http import _client, _free_port, _wait
from bench.bench_tasks import EDGES, TASKS, build_graph
from bench.common import in_process, line, median, percentile
from colibri.domains.tasks.arguments import UpdateTaskArgs
from colibri.domains.tasks.next_actions import next_actions
from colibri.domains.tasks.service import update_task
from colibri.storage import Database, SQLiteDatabase, open_database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS

CLIENTS = 16
SECONDS = float(os.environ.get("BENCH_PG_SECONDS", "8"))
ROUNDS = int(os.environ.get("BENCH_PG_ROUNDS", "3"))
REPLICA_COUNTS = (1, 2, 4)
LATENCY_MS = 1.0
STATEMENTS = "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_utility=on"


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


@asynccontextmanager
async def _replicas(env: dict[str, str], count: int) -> AsyncIterator[list[str]]:
    ports = [_free_port() for _ in range(count)]
    processes = [
        subprocess.Popen([sys.executable, "-m", "colibri", "serve", "--http", f"127.0.0.1:{port}"], env=env)
        for port in ports
    ]
    try:
        for port, process in zip(ports, processes, strict=True):
            _wait(port, process)
        yield [f"http://127.0.0.1:{p}/mcp" for p in ports]
    finally:
        for process in processes:
            process.terminate()
            process.wait(20)


async def writes(
    urls: Sequence[str], token: str, window: tuple[Callable[[], None], Callable[[], None]]
) -> tuple[float, int]:
    """(calls/s, calls) of CLIENTS clients calling thought_record for SECONDS, client i on
    urls[i mod len]; `window` runs right before the timed window opens and after it closes."""
    counts: list[int] = []
    start = anyio.Event()

    async def one(index: int) -> None:
        async with _client(urls[index % len(urls)], token) as client:
            started = await client.call_tool("audit_session_start", {"agent_id": f"bench-{index}"})
            session = (started.structured_content or {})["data"]["session_id"]
            arguments = {"session_id": session, "kind": "observation", "content": "x"}
            for _ in range(20):  # warm-up
                await client.call_tool("thought_record", arguments)
            await start.wait()
            done, deadline = 0, time.perf_counter() + SECONDS
            while time.perf_counter() < deadline:
                result = await client.call_tool("thought_record", arguments)
                if result.is_error:
                    raise RuntimeError(f"thought_record failed during the benchmark: {result.content}")
                done += 1
            counts.append(done)

    async with anyio.create_task_group() as tasks:
        for index in range(CLIENTS):
            tasks.start_soon(one, index)
        await anyio.sleep(3.0)  # every client connected and warm
        window[0]()
        start.set()
    window[1]()
    return sum(counts) / SECONDS, sum(counts)


class Statements:
    """Statements the server ran in one database during a window (pg_stat_statements)."""

    def __init__(self, server: pg.PostgresServer, url: str) -> None:
        self._server, self._name = server, url.rsplit("/", 1)[1]
        self.total = self.token_checks = 0

    def open(self) -> None:
        self._server.admin("SELECT pg_stat_statements_reset()")

    def close(self) -> None:
        import psycopg

        with psycopg.connect(self._server.url()) as conn:
            row = conn.execute(
                "SELECT coalesce(sum(calls), 0),"
                " coalesce(sum(calls) FILTER (WHERE query LIKE '%%FROM access_tokens%%'), 0)"
                " FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s)",
                (self._name,),
            ).fetchone()
        assert row is not None
        self.total, self.token_checks = int(row[0]), int(row[1])


async def bench_replicas(server: pg.PostgresServer, folder: Path) -> None:
    """The SQLite baseline (0 below) and 1, 2, 4 replicas, taking turns round by round."""
    key = signing_key(folder)
    urls = {count: server.new_database() for count in REPLICA_COUNTS}
    envs = {0: _env({"COLIBRI_DB_PATH": str(folder / "bench.db")}, key)}
    envs.update({count: _env({"COLIBRI_DB_URL": url}, key) for count, url in urls.items()})
    tokens = {count: _token(env) for count, env in envs.items()}
    rates: dict[int, list[float]] = {count: [] for count in envs}
    statements: dict[int, list[tuple[float, float]]] = {count: [] for count in REPLICA_COUNTS}
    order = list(envs)
    for round_no in range(ROUNDS):
        for count in order if round_no % 2 == 0 else order[::-1]:
            counter = Statements(server, urls[count]) if count else None
            window = (counter.open, counter.close) if counter else (_nothing, _nothing)
            async with _replicas(envs[count], max(count, 1)) as served:
                rate, calls = await writes(served, tokens[count], window)
            rates[count].append(rate)
            if counter:
                chain = counter.total - counter.token_checks
                statements[count].append((counter.total / calls, chain / calls))
    _report(rates, statements)


def _report(rates: dict[int, list[float]], statements: dict[int, list[tuple[float, float]]]) -> None:
    label = f"thought_record, {CLIENTS} HTTP clients"
    print(f"(each figure: the median of {ROUNDS} rounds; a ratio, the median of the rounds' ratios)")
    line(f"{label}, 1 process on SQLite (baseline)", median(rates[0]), "calls/s")
    for count in REPLICA_COUNTS:
        line(f"{label}, {count} replica(s) on PostgreSQL", median(rates[count]), "calls/s")
        target = ">= 1.0" if count == 1 else ""
        _ratio(f"  ratio to SQLite ({count} replica(s))", rates[count], rates[0], target)
        if count > 1:
            _ratio(f"  ratio to 1 replica ({count} replicas)", rates[count], rates[1], ">= 1.0")
        every, chain = (median([s[i] for s in statements[count]]) for i in (0, 1))
        line(f"  statements per call ({count}), server's count: all", every, "")
        line(f"  statements per call ({count}): the call (without its token check)", chain, "")


def _ratio(label: str, measured: list[float], baseline: list[float], target: str) -> None:
    """The median of the rounds' ratios, and each round's."""
    ratios = [m / b for m, b in zip(measured, baseline, strict=True)]
    line(label, median(ratios), "x", target)
    print(f"    by round: {', '.join(f'{r:.3f}' for r in ratios)}", flush=True)


async def bench_latency(server: pg.PostgresServer, folder: Path) -> None:
    """One replica whose database is LATENCY_MS further away, through the counting proxy."""
    url = server.new_database()
    port = _free_port()
    proxy = subprocess.Popen(
        [sys.executable, "-m", "bench.latency_proxy", str(port), str(server.port), str(LATENCY_MS)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proxy.stdin is not None and proxy.stdout is not None
    if proxy.stdout.readline().strip() != "ready":
        raise RuntimeError("the latency proxy did not start")
    counts: list[dict[str, str]] = []

    def snapshot() -> None:
        assert proxy.stdin is not None and proxy.stdout is not None
        proxy.stdin.write("\n")
        proxy.stdin.flush()
        counts.append(dict(pair.split("=") for pair in proxy.stdout.readline().split()))

    try:
        far = url.replace(f":{server.port}/", f":{port}/")
        env = _env({"COLIBRI_DB_URL": far}, signing_key(folder))
        token = _token(env)
        measured = _added_latency(far, url)
        async with _replicas(env, 1) as urls:
            rate, calls = await writes(urls, token, (snapshot, snapshot))
    finally:
        proxy.terminate()
        proxy.wait(10)
    before, after = counts
    turns = int(after["turns"]) - int(before["turns"])
    per = [int(n) for n in after["per"].split(",")]
    per_before = [int(n) for n in before["per"].split(",")] + [0] * len(per)
    by_connection = sorted((now - then for now, then in zip(per, per_before, strict=False)), reverse=True)
    line(f"added round-trip time (measured, median of SELECT 1), {LATENCY_MS:g} ms asked", measured, "ms")
    line(
        f"thought_record, {CLIENTS} HTTP clients, 1 replica, database +{LATENCY_MS:g} ms away",
        rate,
        "calls/s",
        ">= 300",
    )
    line("  round trips per call, all connections (proxy's count)", turns / calls, "")
    shown = ", ".join(f"{turns / calls:.2f}" for turns in by_connection[:3])
    print(f"  round trips per call on the replica's busiest connections: {shown}", flush=True)


def _added_latency(far: str, near: str) -> float:
    def probe(url: str) -> float:
        db = open_database(url, readonly=True)
        try:
            db.execute("SELECT 1").fetchone()
            return median(in_process(lambda: db.execute("SELECT 1").fetchone(), 50))
        finally:
            db.close()

    return (probe(far) - probe(near)) * 1000


def _nothing() -> None:
    return None


def _next_actions_samples(db: Database) -> tuple[list[float], list[float]]:
    """p50 samples with the board unchanged, and with one task changed before each call."""
    try:
        build_graph(db)
        next_actions(db, 5)
        unchanged = in_process(lambda: next_actions(db, 5), 60)
        changed = []
        for n in range(20):
            update_task(db, UpdateTaskArgs(task_id="T-1", title=f"renamed {n}"))
            changed.extend(in_process(lambda: next_actions(db, 5), 1))
        return unchanged, changed
    finally:
        db.close()


def bench_next_actions(server: pg.PostgresServer, folder: Path) -> None:
    """The same graph on both backends in one run: the SQLite figure shows what the PostgreSQL
    round trips and row decoding add to the same Python graph work."""
    sqlite = SQLiteDatabase.open(folder / "graph.db")
    migrate(sqlite, MIGRATIONS)
    on_sqlite, changed_sqlite = _next_actions_samples(sqlite)
    on_postgres, changed_postgres = _next_actions_samples(open_database(server.new_database()))
    label = f"task_next_actions, {TASKS:,} tasks / {EDGES:,} edges"
    line(f"{label}, on SQLite (same run): p50", median(on_sqlite) * 1000, "ms")
    line(f"{label}, on PostgreSQL: p50", median(on_postgres) * 1000, "ms", "<= 50")
    line("task_next_actions on PostgreSQL: p95", percentile(on_postgres, 95) * 1000, "ms")
    line("  a task changed before each call: SQLite p50", median(changed_sqlite) * 1000, "ms")
    line("  a task changed before each call: PostgreSQL p50", median(changed_postgres) * 1000, "ms")


def main() -> None:
    print(f"(load average before: {os.getloadavg()[0]:.2f})", flush=True)
    servers = pg.start(STATEMENTS)
    server = next(servers)
    try:
        server.admin("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        with tempfile.TemporaryDirectory(prefix="colibri-bench-pg-") as tmp:
            bench_next_actions(server, Path(tmp))
            anyio.run(bench_replicas, server, Path(tmp))
            anyio.run(bench_latency, server, Path(tmp))
    finally:
        servers.close()
    print(f"(load average after: {os.getloadavg()[0]:.2f})", flush=True)
