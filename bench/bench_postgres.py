"""PostgreSQL at team scale (SPEC §18, §25), every setup in the same run:

- thought_record calls/s with 16 HTTP clients (bearer tokens on) for BENCH_PG_SECONDS (8) per
  setup: one `colibri serve --http` on SQLite (the baseline), and 1, 2 and 4 replicas sharing
  one PostgreSQL database. The setups take turns for BENCH_PG_ROUNDS (3) rounds, the order
  reversed every other round, and each figure is the median over the rounds, a ratio the median
  of the rounds' ratios: one window per setup, one after the other, gave 0.89 to 1.35 for
  4 replicas against 1 over six runs, as the machine's load drifted between the windows.
  Targets: 4 (and 2) replicas >= 1 replica; a replica's CPU per call on PostgreSQL <= 1.2x the
  SQLite process's (SPEC §25: CPU per call, from /proc, measures the design where calls/s on two
  cores shared with PostgreSQL measured the machine, so the calls/s ratio to SQLite is printed
  without a target).
- per window, from /proc (bench/pg_meters.py): the replicas' CPU per call and PostgreSQL's (the
  postmaster and all its processes); statements per call from the server's own statistics
  (pg_stat_statements, reset as each window opens; every statement of the database counts,
  token checks included) and calls per write transaction (COMMITs: group commit's batches);
- one replica reaching the database through a TCP proxy (bench/latency_proxy.py) that holds each
  answer 0 ms (near) or 1 ms (far), the two taking turns over the same connections: calls/s
  far / near (target >= 0.9), and the round trips the replica waited for, per call and per write
  transaction, on its chain's connection and on all: the proxy reads the protocol and counts
  each Sync, Flush and simple Query the client sent (in pipeline mode psycopg sends one only
  where it is about to wait for an answer), so the count is the driver's own, not a constant;
- a scale-out model from the 1-replica figures (bench/pg_meters.py; docs/explanation/scaling.md):
  calls/s per core of a replica, PostgreSQL's CPU per call, predicted calls/s of R replicas on C
  cores, and the model against the 1, 2, 4 replicas measured here;
- task_next_actions on 10,000 tasks / 20,000 edges: p50 with an unchanged board (target
  <= 50 ms) and p50 when a task changed since the previous call (the board read again).

The PostgreSQL server is started for the run the way the test suite starts it
(tests/helpers/postgres.py: initdb + pg_ctl in a temporary folder), with pg_stat_statements, and
with `fsync=on`, `full_page_writes=on`, `synchronous_commit=off`: what SQLite's WAL with
`synchronous=NORMAL` promises (SPEC §1.7, §25). A committed transaction survives the server
process being killed; a power loss can drop the last ones (at most about 3 x wal_writer_delay),
never corrupt the store. The test suite's server, where durability is not under test, skips
fsync altogether.
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

from bench.bench_http import _client
from bench.bench_tasks import EDGES, TASKS, build_graph
from bench.common import in_process, line, median, percentile
from bench.pg_meters import CpuMeter, model
from bench.procs import free_port, postgres_pids, wait_listening_sync
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
# Later settings win over the test helper's fsync=off: durable as SQLite's synchronous=NORMAL.
DURABLE = {"fsync": "on", "full_page_writes": "on", "synchronous_commit": "off"}


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
async def _served(env: dict[str, str], count: int) -> AsyncIterator[tuple[list[str], list[int]]]:
    """`count` replicas, running: their MCP URLs and their pids."""
    ports = [free_port() for _ in range(count)]
    processes = [
        subprocess.Popen([sys.executable, "-m", "colibri", "serve", "--http", f"127.0.0.1:{port}"], env=env)
        for port in ports
    ]
    try:
        for port, process in zip(ports, processes, strict=True):
            wait_listening_sync(port, process)
        yield [f"http://127.0.0.1:{p}/mcp" for p in ports], [process.pid for process in processes]
    finally:
        for process in processes:
            process.terminate()
            process.wait(20)


@asynccontextmanager
async def _replicas(env: dict[str, str], count: int) -> AsyncIterator[list[str]]:
    async with _served(env, count) as (urls, _):
        yield urls


async def writes(
    urls: Sequence[str], token: str, window: tuple[Callable[[], None], Callable[[], None]]
) -> tuple[float, int]:
    """(calls/s, calls) of CLIENTS clients calling thought_record for SECONDS, client i on
    urls[i mod len]; `window` runs right before the timed window opens and as it closes (before
    the clients disconnect, which is not part of the window)."""
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
        await anyio.sleep(SECONDS)
        window[1]()
    return sum(counts) / SECONDS, sum(counts)


class Statements:
    """Statements the server ran in one database during a window (pg_stat_statements), and its
    write transactions: each takes the write lock once (pg_stat_statements does not count
    BEGIN and COMMIT), one per batch of group commit."""

    def __init__(self, server: pg.PostgresServer, url: str) -> None:
        self._server, self._name = server, url.rsplit("/", 1)[1]
        self.total = self.token_checks = self.transactions = 0

    def open(self) -> None:
        self._server.admin("SELECT pg_stat_statements_reset()")

    def close(self) -> None:
        import psycopg

        with psycopg.connect(self._server.url()) as conn:
            row = conn.execute(
                "SELECT coalesce(sum(calls), 0),"
                " coalesce(sum(calls) FILTER (WHERE query LIKE '%%FROM access_tokens%%'), 0),"
                " coalesce(sum(calls) FILTER (WHERE query LIKE '%%pg_advisory_xact_lock%%'), 0)"
                " FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = %s)",
                (self._name,),
            ).fetchone()
        assert row is not None
        self.total, self.token_checks, self.transactions = (int(n) for n in row)


class Window:
    """Everything read over one timed window: the replicas' CPU, PostgreSQL's, its statements,
    and the round trips a proxy in between counted (`waits`: on the chain's connection, on all)."""

    def __init__(
        self,
        server: pg.PostgresServer | None,
        url: str | None,
        replicas: list[int],
        proxy: Proxy | None = None,
    ) -> None:
        self.replicas = CpuMeter(lambda: replicas)
        self.clients = CpuMeter(lambda: [os.getpid()])  # this process: the 16 clients
        self.postgres = CpuMeter(postgres_pids(server.folder / "data")) if server else None
        self.statements = Statements(server, url) if server and url else None
        self.proxy = proxy
        self._connections: list[tuple[int, int]] = []
        self.waits = (0, 0)
        self.rate = 0.0
        self.calls = 0

    def open(self) -> None:
        for meter in (self.statements, self.postgres, self.replicas, self.clients):
            if meter is not None:
                meter.open()
        if self.proxy is not None:
            self._connections = self.proxy.connections()

    def close(self) -> None:
        if self.proxy is not None:
            self.waits = _waits(self._connections, self.proxy.connections())
        for meter in (self.clients, self.replicas, self.postgres, self.statements):
            if meter is not None:
                meter.close()

    def per_call(self, amount: float) -> float:
        return amount / max(self.calls, 1)

    def replicas_cpu(self) -> float:
        return self.per_call(self.replicas.seconds)

    def postgres_cpu(self) -> float:
        return self.per_call(self.postgres.seconds if self.postgres else 0.0)

    def clients_cpu(self) -> float:
        return self.per_call(self.clients.seconds)

    def statements_per_call(self) -> float:
        return self.per_call(self.statements.total if self.statements else 0)

    def chain_statements_per_call(self) -> float:
        counted = self.statements
        return self.per_call(counted.total - counted.token_checks if counted else 0)

    def calls_per_transaction(self) -> float:
        return self.calls / max(self.statements.transactions if self.statements else 0, 1)


async def timed(urls: Sequence[str], token: str, window: Window) -> Window:
    window.rate, window.calls = await writes(urls, token, (window.open, window.close))
    return window


async def bench_replicas(server: pg.PostgresServer, folder: Path) -> float:
    """The SQLite baseline (0 below) and 1, 2, 4 replicas, taking turns round by round; returns
    one replica's median calls/s."""
    key = signing_key(folder)
    urls = {count: server.new_database() for count in REPLICA_COUNTS}
    envs = {0: _env({"COLIBRI_DB_PATH": str(folder / "bench.db")}, key)}
    envs.update({count: _env({"COLIBRI_DB_URL": url}, key) for count, url in urls.items()})
    tokens = {count: _token(env) for count, env in envs.items()}
    windows: dict[int, list[Window]] = {count: [] for count in envs}
    order = list(envs)
    for round_no in range(ROUNDS):
        for count in order if round_no % 2 == 0 else order[::-1]:
            async with _served(envs[count], max(count, 1)) as (served, pids):
                window = Window(server if count else None, urls.get(count), pids)
                windows[count].append(await timed(served, tokens[count], window))
    _report(windows)
    return median([w.rate for w in windows[1]])


def _report(windows: dict[int, list[Window]]) -> None:
    label = f"thought_record, {CLIENTS} HTTP clients"
    rates = {count: [w.rate for w in ws] for count, ws in windows.items()}
    replica_cpu = {count: [w.replicas_cpu() for w in ws] for count, ws in windows.items()}
    print(f"(each figure: the median of {ROUNDS} rounds; a ratio, the median of the rounds' ratios)")
    line(f"{label}, 1 process on SQLite (baseline)", median(rates[0]), "calls/s")
    line("  its CPU per call (/proc)", median(replica_cpu[0]) * 1000, "ms")
    for count in REPLICA_COUNTS:
        ws = windows[count]
        line(f"{label}, {count} replica(s) on PostgreSQL", median(rates[count]), "calls/s")
        _ratio(f"  ratio to SQLite ({count} replica(s))", rates[count], rates[0], "")
        if count > 1:
            _ratio(f"  ratio to 1 replica ({count} replicas)", rates[count], rates[1], ">= 1.0")
        line(f"  replicas' CPU per call ({count}, /proc)", median(replica_cpu[count]) * 1000, "ms")
        if count == 1:
            _ratio(
                "  a replica's CPU per call, PostgreSQL / SQLite", replica_cpu[1], replica_cpu[0], "<= 1.2"
            )
        line(f"  PostgreSQL's CPU per call ({count}, /proc)", _of(ws, Window.postgres_cpu) * 1000, "ms")
        line(f"  statements per call ({count}), server's count: all", _of(ws, Window.statements_per_call), "")
        line(
            f"  statements per call ({count}): the call (without its token check)",
            _of(ws, Window.chain_statements_per_call),
            "",
        )
        line(
            f"  calls per write transaction ({count}, group commit)",
            _of(ws, Window.calls_per_transaction),
            "",
        )
    one = windows[1]
    line("  the clients' CPU per call (this process, 1 replica)", _of(one, Window.clients_cpu) * 1000, "ms")
    model(
        _of(one, Window.replicas_cpu),
        _of(one, Window.postgres_cpu),
        _of(one, Window.clients_cpu),
        {count: median(rates[count]) for count in REPLICA_COUNTS},
    )


def _of(windows: list[Window], value: Callable[[Window], float]) -> float:
    return median([value(window) for window in windows])


def _ratio(label: str, measured: list[float], baseline: list[float], target: str) -> None:
    """The median of the rounds' ratios, and each round's."""
    ratios = [m / b for m, b in zip(measured, baseline, strict=True)]
    line(label, median(ratios), "x", target)
    print(f"    by round: {', '.join(f'{r:.3f}' for r in ratios)}", flush=True)


class Proxy:
    """bench/latency_proxy.py in front of the server: its delay set, its round trips read."""

    def __init__(self, server_port: int) -> None:
        self.port = free_port()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bench.latency_proxy", str(self.port), str(server_port), "0"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if self._ask(None) != "ready":
            raise RuntimeError("the latency proxy did not start")

    def _ask(self, question: str | None) -> str:
        assert self._process.stdin is not None and self._process.stdout is not None
        if question is not None:
            self._process.stdin.write(question + "\n")
            self._process.stdin.flush()
        return self._process.stdout.readline().strip()

    def delay(self, ms: float) -> None:
        self._ask(f"delay {ms:g}")

    def connections(self) -> list[tuple[int, int]]:
        """(bytes sent, round trips waited for) so far of each connection, in the order they opened."""
        counts = dict(pair.split("=") for pair in self._ask("").split())
        sent, waits = (list(map(int, counts[key].split(","))) for key in ("up", "waits"))
        return list(zip(sent, waits, strict=True))

    def close(self) -> None:
        self._process.terminate()
        self._process.wait(10)


def _waits(before: list[tuple[int, int]], after: list[tuple[int, int]]) -> tuple[int, int]:
    """Round trips waited for in between: on the connection that sent the most (the replica's
    chain connection: it sends the rows, its token checks send one short query each), and on all."""
    before = before + [(0, 0)] * (len(after) - len(before))
    deltas = [(b - b0, w - w0) for (b, w), (b0, w0) in zip(after, before, strict=True)]
    return max(deltas)[1], sum(w for _, w in deltas)


async def bench_latency(server: pg.PostgresServer, folder: Path) -> None:
    """One replica whose database is reached through the proxy, near (0 ms added) and LATENCY_MS
    away in turns, over the same connections; ratio far / near, median of the rounds'."""
    url = server.new_database()
    proxy = Proxy(server.port)
    far_url = url.replace(f":{server.port}/", f":{proxy.port}/")
    try:
        env = _env({"COLIBRI_DB_URL": far_url}, signing_key(folder))
        token = _token(env)
        rates: dict[float, list[float]] = {0.0: [], LATENCY_MS: []}
        trips: dict[float, list[tuple[float, float, float]]] = {0.0: [], LATENCY_MS: []}
        async with _served(env, 1) as (served, pids):
            for round_no in range(ROUNDS):
                for ms in (0.0, LATENCY_MS) if round_no % 2 == 0 else (LATENCY_MS, 0.0):
                    proxy.delay(ms)
                    window = await timed(served, token, Window(server, url, pids, proxy))
                    chain, every = window.waits
                    rates[ms].append(window.rate)
                    commits = window.statements.transactions if window.statements else 0
                    trips[ms].append((chain / window.calls, chain / max(commits, 1), every / window.calls))
        proxy.delay(LATENCY_MS)
        measured = _added_latency(far_url, url)
    finally:
        proxy.close()
    line(f"added round-trip time (measured, median of SELECT 1), {LATENCY_MS:g} ms asked", measured, "ms")
    label = f"thought_record, {CLIENTS} HTTP clients, 1 replica"
    line(f"{label}, database near (through the proxy)", median(rates[0.0]), "calls/s")
    line(f"{label}, database +{LATENCY_MS:g} ms away", median(rates[LATENCY_MS]), "calls/s")
    _ratio(f"  +{LATENCY_MS:g} ms away / near", rates[LATENCY_MS], rates[0.0], ">= 0.9")
    for ms, name in ((0.0, "near"), (LATENCY_MS, f"+{LATENCY_MS:g} ms")):
        chain, batch, every = (median([t[i] for t in trips[ms]]) for i in range(3))
        line(f"  round trips per call ({name}): the chain's connection", chain, "")
        line(f"  round trips per write transaction ({name}): the chain's connection", batch, "")
        line(f"  round trips per call ({name}): all, token checks included", every, "")


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
    settings = " ".join(f"-c {name}={value}" for name, value in DURABLE.items())
    servers = pg.start(f"{STATEMENTS} {settings}")
    server = next(servers)
    try:
        server.admin("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        _check_durable(server)
        with tempfile.TemporaryDirectory(prefix="colibri-bench-pg-") as tmp:
            bench_next_actions(server, Path(tmp))
            anyio.run(bench_replicas, server, Path(tmp))
            anyio.run(bench_latency, server, Path(tmp))
    finally:
        servers.close()
    print(f"(load average after: {os.getloadavg()[0]:.2f})", flush=True)


def _check_durable(server: pg.PostgresServer) -> None:
    """The server runs with DURABLE's settings, asked of the server itself."""
    import psycopg

    with psycopg.connect(server.url()) as conn:
        found = {name: str(conn.execute(f"SHOW {name}").fetchone()[0]) for name in DURABLE}  # type: ignore[index]
    if found != DURABLE:
        raise RuntimeError(f"the bench's PostgreSQL runs with {found}, not {DURABLE}")
    print("(PostgreSQL: " + ", ".join(f"{k}={v}" for k, v in found.items()) + ")", flush=True)
