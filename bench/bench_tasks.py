"""β task pipeline benchmarks (issue 4).

1. task_next_actions on 10,000 tasks with 20,000 dependency edges, in process: p50 <= 50 ms.
2. task_create sequential calls/s over stdio against the bare echo server, same run: >= 0.80x.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import anyio

from bench.common import (
    colibri_params,
    echo_params,
    in_process,
    line,
    median,
    percentile,
    rate,
    sequential_calls,
)
from colibri.core.clock import utc_now
from colibri.domains.tasks.next_actions import next_actions
from colibri.storage import Database, SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS

TASKS = 10_000
EDGES = 20_000
# A working backlog: mostly todo, some under way, some finished.
STATUS_MIX = (
    ("todo", 0.60),
    ("in_progress", 0.05),
    ("review", 0.05),
    ("blocked", 0.05),
    ("done", 0.20),
    ("cancelled", 0.05),
)
PRIORITIES = ("critical", "high", "medium", "low")


def build_graph(db: Database, tasks: int = TASKS, edges: int = EDGES, seed: int = 4) -> None:
    """`tasks` tasks and `edges` random depends_on edges, each from a newer task to an older one
    (so the graph is acyclic), written in one transaction."""
    rng = random.Random(seed)
    statuses = [s for s, _ in STATUS_MIX]
    weights = [w for _, w in STATUS_MIX]
    now = utc_now()
    rows = [
        (n, f"T-{n}", f"task {n}", rng.choices(statuses, weights)[0], rng.choice(PRIORITIES), now, now)
        for n in range(1, tasks + 1)
    ]
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < edges:
        a = rng.randrange(2, tasks + 1)
        pairs.add((a, rng.randrange(1, a)))
    with db.atomic() as conn:
        conn.executemany(
            "INSERT INTO tasks (number, id, title, status, priority, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.executemany(
            "INSERT INTO task_dependencies (task_id, depends_on, position) VALUES (?, ?, ?)",
            [(f"T-{a}", f"T-{b}", position) for position, (a, b) in enumerate(sorted(pairs))],
        )


def bench_next_actions() -> None:
    with tempfile.TemporaryDirectory(prefix="colibri-bench-tasks-") as tmp:
        db = SQLiteDatabase.open(Path(tmp) / "graph.db")
        try:
            migrate(db, MIGRATIONS)
            build_graph(db)
            result = next_actions(db, 5)
            samples = in_process(lambda: next_actions(db, 5), 40)
        finally:
            db.close()
    line(f"task_next_actions, {TASKS:,} tasks / {EDGES:,} edges: p50", median(samples) * 1000, "ms", "<= 50")
    line("task_next_actions: p95", percentile(samples, 95) * 1000, "ms")
    top = ", ".join(f"{a.task.id} {a.action} (unblocks {a.unblocks})" for a in result.actions)
    print(f"  top actions: {top}; blocked: {result.blocked_total}", flush=True)


def _create_args(i: int) -> dict[str, object]:
    return {"title": f"benchmark task {i}", "priority": "high", "tags": ["bench"]}


async def bench_create(rounds: int = 3, n: int = 400) -> None:
    """Alternate the baseline and Colibri a few times and compare medians: on a shared 2-core
    machine one unlucky stretch would otherwise decide the ratio. server_ping over the same
    transport is printed as well: it is the runtime's own floor (chain, audit, envelopes), the
    part of the gap that no task handler can remove."""
    echo: list[float] = []
    ping: list[float] = []
    create: list[float] = []
    with tempfile.TemporaryDirectory(prefix="colibri-bench-tasks-") as tmp:
        db_path = Path(tmp) / "create.db"
        for _ in range(rounds):
            echo.append(rate(await sequential_calls(echo_params(), "echo", _create_args, n)))
            ping.append(rate(await sequential_calls(colibri_params(db_path), "server_ping", {}, n)))
            samples = await sequential_calls(colibri_params(db_path), "task_create", _create_args, n)
            create.append(rate(samples))
    echo_rate, ping_rate, create_rate = median(echo), median(ping), median(create)
    line(f"echo server: sequential calls/s (baseline, median of {rounds})", echo_rate, "calls/s")
    line("server_ping over stdio: calls/s (runtime floor)", ping_rate, "calls/s")
    line("task_create over stdio: sequential calls/s", create_rate, "calls/s")
    line("task_create: p50 latency (last round)", median(samples) * 1000, "ms")
    line("server_ping / echo throughput ratio (context)", ping_rate / echo_rate, "x")
    line("task_create / echo throughput ratio", create_rate / echo_rate, "x", ">= 0.80")


def main() -> None:
    bench_next_actions()
    anyio.run(bench_create)
