"""Claims at team scale (SPEC §24, issue 44): task_next_actions(claim=true) on a 10,000-task board
(bench_tasks.build_graph: 20,000 edges, about 1,160 tasks ready to start) on PostgreSQL, 16 agents
claiming, each its own principal; the unclaimed call is timed in the same run on the same board.

1. The call itself, in process (as §18 times task_next_actions): 16 agents claiming in turn through
   one connection (one replica: each claim finds the board as the previous claim left it), then
   through two connections taking turns (two replicas: each claim finds the board moved by the
   other, and reads it again), beside the unclaimed call. Target: claim p50 <= 50 ms.
2. Over HTTP, 16 clients at once, each under its own token, to one `colibri serve --http`: claims
   and unclaimed calls take turns in windows of BENCH_CLAIMS_CALLS (20) calls per agent, the order
   reversed every other of BENCH_CLAIMS_ROUNDS (3) rounds, so a drift of the machine's load weighs
   on both alike. Each figure is one call's latency while the 15 others call too: on a 2-core
   machine mostly the wait behind them (the server runs calls one at a time), unclaimed alike.
Every claim must take a task no other claim took (checked: a benchmark that double-claims fails).

Small numbers for a quick run: BENCH_CLAIMS_TASKS=500 BENCH_CLAIMS_CALLS=2 BENCH_CLAIMS_ROUNDS=1.
"""

from __future__ import annotations

import os
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from tests.helpers import postgres as pg
from tests.helpers import signing_key

from bench.bench_http import _client
from bench.bench_postgres import _env, _replicas
from bench.bench_tasks import build_graph
from bench.common import line, median, percentile
from colibri.domains import access
from colibri.domains.tasks import claims
from colibri.domains.tasks.next_actions import next_actions
from colibri.storage import Database, open_database

TASKS = int(os.environ.get("BENCH_CLAIMS_TASKS", "10000"))
CALLS = int(os.environ.get("BENCH_CLAIMS_CALLS", "20"))
ROUNDS = int(os.environ.get("BENCH_CLAIMS_ROUNDS", "3"))
AGENTS = 16
CLAIM = {"claim": True, "lease_s": 3600}
UNCLAIMED: dict[str, Any] = {}


def _board(url: str) -> dict[str, str]:
    """The board, and a write token per agent (each agent its own principal)."""
    db = open_database(url)
    try:
        build_graph(db, TASKS, 2 * TASKS)
        return {
            f"agent{n}": access.create(db, f"agent{n}", access.Scope.WRITE, None, time.time())
            for n in range(AGENTS)
        }
    finally:
        db.close()


def bench_in_process(url: str) -> None:
    one, other = open_database(url), open_database(url)
    try:
        build_graph(one, TASKS, 2 * TASKS)
        next_actions(one, 5)
        alone = _claims([one], CALLS * 4)
        taking_turns = _claims([one, other], CALLS * 2)
        plain = [_timed(lambda n=n: next_actions(one, 5, f"agent{n % AGENTS}")) for n in range(CALLS * 4)]
    finally:
        one.close()
        other.close()
    label = f"claims, {TASKS:,} tasks, PostgreSQL, in process"
    line(f"{label}: claim=true p50, {AGENTS} agents, 1 replica", median(alone) * 1000, "ms", "<= 50")
    line(f"{label}: claim=true p50, 2 replicas taking turns", median(taking_turns) * 1000, "ms")
    line(f"{label}: unclaimed p50 (same run)", median(plain) * 1000, "ms")
    line("  claim=true p95, 1 replica", percentile(alone, 95) * 1000, "ms")


def _claims(replicas: list[Database], count: int) -> list[float]:
    samples = []
    for n in range(count):
        db = replicas[n % len(replicas)]
        samples.append(_timed(lambda db=db, n=n: claims.claim(db, f"agent{n % AGENTS}", 3600)))
    return samples


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


async def _window(clients: list[Client], arguments: dict[str, Any], claimed: list[str]) -> list[float]:
    """Every client makes CALLS calls one after the other, all clients at once; each call's latency."""
    samples: list[float] = []

    async def one(client: Client) -> None:
        for _ in range(CALLS):
            start = time.perf_counter()
            result = await client.call_tool("task_next_actions", arguments)
            samples.append(time.perf_counter() - start)
            data = (result.structured_content or {}).get("data", {})
            if result.is_error or data.get("ok") is False:
                raise RuntimeError(f"task_next_actions failed during the benchmark: {result.content}")
            if arguments.get("claim"):
                if not data["actions"]:
                    raise RuntimeError(f"nothing left to claim ({data['reason']}): lower BENCH_CLAIMS_CALLS")
                claimed.append(data["actions"][0]["task"]["id"])

    async with anyio.create_task_group() as group:
        for client in clients:
            group.start_soon(one, client)
    return samples


async def bench_claims(url: str, folder: Path) -> None:
    tokens = _board(url)
    env = _env({"COLIBRI_DB_URL": url}, signing_key(folder))
    samples: dict[str, list[float]] = {"claim": [], "unclaimed": []}
    claimed: list[str] = []
    async with _replicas(env, 1) as (served,), AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(_client(served, token)) for token in tokens.values()]
        for client in clients:  # warm: connected, phase 2 done, the board read once
            await client.call_tool("task_next_actions", UNCLAIMED)
        windows = (("unclaimed", UNCLAIMED), ("claim", CLAIM))
        for round_no in range(ROUNDS):
            for name, arguments in windows if round_no % 2 == 0 else windows[::-1]:
                samples[name].extend(await _window(clients, arguments, claimed))
    if len(set(claimed)) != len(claimed):
        raise RuntimeError(f"{len(claimed) - len(set(claimed))} tasks were claimed twice")
    label = f"claims, {TASKS:,} tasks, PostgreSQL, {AGENTS} HTTP agents"
    claim, plain = samples["claim"], samples["unclaimed"]
    line(f"{label}: claim=true p50", median(claim) * 1000, "ms")
    line(f"{label}: unclaimed p50 (same run)", median(plain) * 1000, "ms")
    line("  claim=true p95", percentile(claim, 95) * 1000, "ms")
    line("  unclaimed p95", percentile(plain, 95) * 1000, "ms")
    line("  claim p50 / unclaimed p50", median(claim) / median(plain), "x")
    print(f"  {len(claimed)} claims, each a different task", flush=True)


def main() -> None:
    print(f"(load average before: {os.getloadavg()[0]:.2f})", flush=True)
    servers = pg.start()
    server = next(servers)
    try:
        with tempfile.TemporaryDirectory(prefix="colibri-bench-claims-") as tmp:
            bench_in_process(server.new_database())
            anyio.run(bench_claims, server.new_database(), Path(tmp))
    finally:
        servers.close()
    print(f"(load average after: {os.getloadavg()[0]:.2f})", flush=True)
