"""Claims at team scale (SPEC §24, issue 44): task_next_actions(claim=true) on a 10,000-task board
(bench_tasks.build_graph: 20,000 edges, about 1,160 tasks ready to start) on PostgreSQL, 16 agents
claiming, each its own principal; the unclaimed call is timed in the same run on the same board.

1. The call itself, in process (as §18 times task_next_actions): 16 agents claiming in turn through
   one connection (one replica: each claim finds the board as the previous claim left it), then
   through two and four connections taking turns (replicas, as in the acceptance test: each claim
   finds the board moved by the others and catches up on the tasks they changed), beside the
   unclaimed call. Then the unclaimed call on a changing board (SPEC §25): between each two calls
   another connection (a writer on another replica) sets a random todo task's priority, so every
   call catches up first, beside the same call on the board unchanged. Targets: p50 <= 50 ms.
2. Over HTTP, 16 agents at once, each under its own token, to one `colibri serve --http`: claims
   and unclaimed calls take turns in windows of BENCH_CLAIMS_CALLS / 2 (10) calls per agent, the
   order reversed every other of BENCH_CLAIMS_ROUNDS (3) rounds, so a drift of the machine's load
   weighs on both alike. Each figure is one call's latency while the 15 others call too: on a
   2-core machine mostly the wait behind them (the server runs calls one at a time). The agents are
   the SDK's clients, then lean clients (plain JSON-RPC over httpx2, see _lean_agent): agents run on
   machines of their own, and 16 SDK clients' CPU on the server's 2 cores is part of what the SDK
   figures measure. Where each call's time goes is printed from /proc: the CPU per call of the
   serve process ("server"), of this process ("agents": its 16 clients) and of PostgreSQL's
   processes ("postgres"); their sum over the 2 cores bounds the calls/s, hence the latency of 16
   calls at once.
Every claim must take a task no other claim took (checked: a benchmark that double-claims fails).

Small numbers for a quick run: BENCH_CLAIMS_TASKS=500 BENCH_CLAIMS_CALLS=2 BENCH_CLAIMS_ROUNDS=1.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from tests.helpers import postgres as pg
from tests.helpers import signing_key

from bench.bench_http import _client
from bench.bench_postgres import _env
from bench.bench_tasks import build_graph
from bench.common import line, median, percentile
from bench.procs import cpu_seconds, free_port, postgres_pids, wait_listening
from colibri.domains import access
from colibri.domains.tasks import claims, service
from colibri.domains.tasks.arguments import UpdateTaskArgs
from colibri.domains.tasks.models import PRIORITIES
from colibri.domains.tasks.next_actions import next_actions
from colibri.storage import Database, open_database

TASKS = int(os.environ.get("BENCH_CLAIMS_TASKS", "10000"))
CALLS = int(os.environ.get("BENCH_CLAIMS_CALLS", "20"))
ROUNDS = int(os.environ.get("BENCH_CLAIMS_ROUNDS", "3"))
AGENTS = 16
HTTP_CALLS = max(1, CALLS // 2)  # per agent and window: two kinds of client share the board's ready tasks
PROTOCOL = "2025-11-25"  # asked for in initialize; the lean client then sends what the server agreed
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
    replicas = [open_database(url) for _ in range(4)]
    one = replicas[0]
    try:
        build_graph(one, TASKS, 2 * TASKS)
        next_actions(one, 5)
        alone = _claims(replicas[:1], CALLS * 4)
        two = _claims(replicas[:2], CALLS * 2)
        four = _claims(replicas, CALLS * 2)
        plain = [_timed(lambda n=n: next_actions(one, 5, f"agent{n % AGENTS}")) for n in range(CALLS * 4)]
        changing = _changing(one, replicas[1], CALLS * 4)
    finally:
        for db in replicas:
            db.close()
    label = f"claims, {TASKS:,} tasks, PostgreSQL, in process"
    line(f"{label}: claim=true p50, {AGENTS} agents, 1 replica", median(alone) * 1000, "ms", "<= 50")
    line(f"{label}: claim=true p50, 2 replicas taking turns", median(two) * 1000, "ms", "<= 50")
    line(f"{label}: claim=true p50, 4 replicas taking turns", median(four) * 1000, "ms", "<= 50")
    line(f"{label}: unclaimed p50, board unchanged (same run)", median(plain) * 1000, "ms", "<= 50")
    line(f"{label}: unclaimed p50, board changed before each call", median(changing) * 1000, "ms", "<= 50")
    line("  claim=true p95: 1 replica", percentile(alone, 95) * 1000, "ms")
    line("  claim=true p95: 4 replicas", percentile(four, 95) * 1000, "ms")
    line("  unclaimed p95, board changed before each call", percentile(changing, 95) * 1000, "ms")


def _changing(reader: Database, writer: Database, count: int) -> list[float]:
    """task_next_actions on `reader`, each call after `writer` set a random todo task's priority
    (the writer's own time is not counted)."""
    rng = random.Random(25)
    todo = {row[0]: row[1] for row in writer.execute("SELECT id, priority FROM tasks WHERE status = 'todo'")}
    ids = sorted(todo)
    samples = []
    for n in range(count):
        task_id = rng.choice(ids)
        # Another priority than the task's (the same one would change nothing).
        todo[task_id] = PRIORITIES[(PRIORITIES.index(todo[task_id]) + 1 + n % 3) % len(PRIORITIES)]
        service.update_task(
            writer, UpdateTaskArgs(task_id=task_id, priority=todo[task_id]), principal="writer"
        )
        samples.append(_timed(lambda n=n: next_actions(reader, 5, f"agent{n % AGENTS}")))
    return samples


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


Agent = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]  # arguments -> the answer's data


async def _window(agents: list[Agent], arguments: dict[str, Any], claimed: list[str]) -> list[float]:
    """Every agent makes HTTP_CALLS calls one after the other, all agents at once; each call's latency."""
    samples: list[float] = []

    async def one(agent: Agent) -> None:
        for _ in range(HTTP_CALLS):
            start = time.perf_counter()
            data = await agent(arguments)
            samples.append(time.perf_counter() - start)
            if arguments.get("claim"):
                if not data["actions"]:
                    raise RuntimeError(f"nothing left to claim ({data['reason']}): lower BENCH_CLAIMS_CALLS")
                claimed.append(data["actions"][0]["task"]["id"])

    async with anyio.create_task_group() as group:
        for agent in agents:
            group.start_soon(one, agent)
    return samples


@asynccontextmanager
async def _sdk_agent(url: str, token: str) -> AsyncIterator[Agent]:
    """An agent as the SDK's client (what agents run), over its own HTTP connection."""
    async with _client(url, token) as client:

        async def call(arguments: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool("task_next_actions", arguments)
            return _data(result.structured_content, result.is_error, result.content)

        yield call


@asynccontextmanager
async def _lean_agent(url: str, token: str) -> AsyncIterator[Agent]:
    """An agent as a lean client: JSON-RPC posted over Streamable HTTP with httpx2, in an initialized
    session under its own token, and nothing else (no SDK session, no models, no validation).

    Agents run on their own machines, not on the server's cores; here 16 SDK clients share the
    bench machine's 2 cores with the server and PostgreSQL, and their CPU stands in every call's
    way. This client is still a real client over real HTTP, only a cheap one, so the latency it
    sees is mostly the server's and the database's."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {token}",
    }
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        hello = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "lean", "version": "1"},
        }
        answer = await http.post(url, content=_message("initialize", hello, 0))
        agreed = _body(answer)["result"]["protocolVersion"]
        http.headers.update(
            {"mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": agreed}
        )
        notified = await http.post(
            url, content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        if notified.status_code >= 300:
            raise RuntimeError(
                f"notifications/initialized answered {notified.status_code}: {notified.text[:300]}"
            )
        ids = itertools.count(1)

        async def call(arguments: dict[str, Any]) -> dict[str, Any]:
            params = {"name": "task_next_actions", "arguments": arguments}
            result = _body(await http.post(url, content=_message("tools/call", params, next(ids))))["result"]
            return _data(result.get("structuredContent"), result.get("isError", False), result.get("content"))

        yield call


def _message(method: str, params: dict[str, Any], number: int) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params})


def _body(answer: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC answer, sent as JSON or as one server-sent event."""
    if answer.status_code >= 300:
        raise RuntimeError(f"the server answered {answer.status_code}: {answer.text[:300]}")
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in answer.text.splitlines() if line.startswith("data:")]
        return dict(json.loads(data[-1]))
    return dict(answer.json())


def _data(structured: dict[str, Any] | None, is_error: bool, content: Any) -> dict[str, Any]:
    data: dict[str, Any] = (structured or {}).get("data", {})
    if is_error or data.get("ok") is False:
        raise RuntimeError(f"task_next_actions failed during the benchmark: {content}")
    return data


class _Meter:
    """CPU spent between `open` and `close` (from /proc, all threads): the serve process's, this
    bench process's (its agents'), and PostgreSQL's (the postmaster and every process it started)."""

    def __init__(self, server_pid: int, postgres_data: Path) -> None:
        self.server_pid = server_pid
        self.postgres = postgres_pids(postgres_data)
        self.spent: dict[str, float] = {"server": 0.0, "agents": 0.0, "postgres": 0.0}
        self._before: dict[str, float] = {}

    def _now(self) -> dict[str, float]:
        return {
            "server": cpu_seconds(self.server_pid),
            "agents": sum(os.times()[:2]),
            "postgres": sum(cpu_seconds(pid) for pid in self.postgres()),
        }

    def open(self) -> None:
        self._before = self._now()

    def close(self) -> None:
        for name, spent in self._now().items():
            self.spent[name] += spent - self._before[name]


def _floor(spent: dict[str, float]) -> float:
    """The mean latency of AGENTS calls always in flight if CPU were all that limited them, on this
    machine's cores with the agents on machines of their own (Little's law: latency = calls in
    flight / calls per second). The serve process is one interpreter, so at most one core: calls/s
    <= 1 / server CPU per call; and the server with PostgreSQL share the cores."""
    cores = os.cpu_count() or 1
    per_second = min(1 / spent["server"], cores / (spent["server"] + spent["postgres"]))
    return AGENTS / per_second


@asynccontextmanager
async def _serving(env: dict[str, str]) -> AsyncIterator[tuple[str, int]]:
    """One `colibri serve --http`, listening: its MCP URL and its pid."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "colibri", "serve", "--http", f"127.0.0.1:{port}"], env=env
    )
    try:
        await wait_listening(port, process, seconds=60)
        yield f"http://127.0.0.1:{port}/mcp", process.pid
    finally:
        process.terminate()
        process.wait(20)


async def bench_claims(url: str, folder: Path, postgres_data: Path) -> None:
    tokens = _board(url)
    env = _env({"COLIBRI_DB_URL": url}, signing_key(folder))
    samples: dict[tuple[str, str], list[float]] = {}
    meters: dict[tuple[str, str], _Meter] = {}
    claimed: list[str] = []
    async with _serving(env) as (served, pid), AsyncExitStack() as stack:
        agents = {
            kind: [await stack.enter_async_context(make(served, token)) for token in tokens.values()]
            for kind, make in (("SDK", _sdk_agent), ("lean", _lean_agent))
        }
        for group in agents.values():  # warm: connected, phase 2 done, the board read once
            for agent in group:
                await agent(UNCLAIMED)
        windows = [(kind, name) for kind in agents for name in ("unclaimed", "claim")]
        for round_no in range(ROUNDS):
            for kind, name in windows if round_no % 2 == 0 else windows[::-1]:
                meter = meters.setdefault((kind, name), _Meter(pid, postgres_data))
                meter.open()
                taken = await _window(agents[kind], CLAIM if name == "claim" else UNCLAIMED, claimed)
                meter.close()
                samples.setdefault((kind, name), []).extend(taken)
    if len(set(claimed)) != len(claimed):
        raise RuntimeError(f"{len(claimed) - len(set(claimed))} tasks were claimed twice")
    label = f"claims, {TASKS:,} tasks, PostgreSQL, {AGENTS} HTTP agents at once, 1 replica"
    for kind in ("SDK", "lean"):
        claim, plain = samples[kind, "claim"], samples[kind, "unclaimed"]
        line(f"{label}, {kind} clients: claim=true p50", median(claim) * 1000, "ms")
        line(f"{label}, {kind} clients: unclaimed p50 (same run)", median(plain) * 1000, "ms")
        line("  claim=true p95", percentile(claim, 95) * 1000, "ms")
        line("  unclaimed p95", percentile(plain, 95) * 1000, "ms")
        for name, count in (("claim", len(claim)), ("unclaimed", len(plain))):
            spent = {who: seconds / count for who, seconds in meters[kind, name].spent.items()}
            cpu = ", ".join(f"{who} {seconds * 1000:.2f} ms" for who, seconds in spent.items())
            print(f"  CPU per {name} call: {cpu}", flush=True)
            line(f"  {name}: latency floor from CPU alone, agents elsewhere", _floor(spent) * 1000, "ms")
    print(f"  {len(claimed)} claims, each a different task", flush=True)


def main() -> None:
    print(f"(load average before: {os.getloadavg()[0]:.2f})", flush=True)
    servers = pg.start()
    server = next(servers)
    try:
        with tempfile.TemporaryDirectory(prefix="colibri-bench-claims-") as tmp:
            bench_in_process(server.new_database())
            anyio.run(bench_claims, server.new_database(), Path(tmp), server.folder / "data")
    finally:
        servers.close()
    print(f"(load average after: {os.getloadavg()[0]:.2f})", flush=True)
