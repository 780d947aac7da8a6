"""Many agents on one board (SPEC §24, issue 44): `colibri serve --http` replicas on one store, agents
as real SDK clients looping task_next_actions(claim=true) → write back → review → done.

Every task is claimed exactly once and done once, and never before its dependencies; agents killed
holding a task lose it to others once their lease ends, the history naming both; a holder paused
past its lease and resumed is refused by its old lease_token.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from colibri.domains import access
from colibri.domains.tasks import service
from colibri.domains.tasks.arguments import CreateTaskArgs
from colibri.storage import Database, open_database
from tests.domains.tasks.claim_agent import work
from tests.helpers import clean_env
from tests.helpers import postgres as pg
from tests.http.helpers import HttpServer, start_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REPLICAS, AGENTS, TASKS, LAYERS = 4, 16, 200, 10
ROOT = Path(__file__).resolve().parents[3]


def _board(store: str, count: int, layers: int) -> dict[str, list[str]]:
    """`count` tasks in `layers` layers, each task past the first layer depending on one or two tasks
    of the layer before (seeded): task id -> its dependencies."""
    rng = random.Random(44)
    per_layer = count // layers
    graph: dict[str, list[str]] = {}
    previous: list[str] = []
    with _opened(store) as db:
        for _ in range(layers):
            current = []
            for _ in range(per_layer):
                deps = rng.sample(previous, k=min(len(previous), rng.choice((1, 2))))
                task = service.create_task(db, CreateTaskArgs(title=f"task {len(graph)}", depends_on=deps))
                graph[task.id] = deps
                current.append(task.id)
            previous = current
    return graph


def _tokens(store: str, names: list[str]) -> dict[str, str]:
    with _opened(store) as db:
        return {name: access.create(db, name, access.Scope.WRITE, None, time.time()) for name in names}


@contextmanager
def _opened(store: str) -> Iterator[Database]:
    db = open_database(store)
    try:
        yield db
    finally:
        db.close()


def _history(store: str) -> list[dict[str, Any]]:
    with _opened(store) as db:
        rows = db.execute(
            "SELECT task_id, version, changed_at, changes, principal FROM task_history ORDER BY id"
        ).fetchall()
        return [
            {"task": r[0], "version": r[1], "at": r[2], "changes": json.loads(r[3]), "principal": r[4]}
            for r in rows
        ]


def _moves(history: list[dict[str, Any]], status: str) -> dict[str, list[dict[str, Any]]]:
    """Each task's history entries that moved it to `status`."""
    moves: dict[str, list[dict[str, Any]]] = {}
    for entry in history:
        if entry["changes"].get("status", {}).get("to") == status:
            moves.setdefault(entry["task"], []).append(entry)
    return moves


@contextmanager
def _replicas(env: dict[str, str], tmp_path: Path) -> Iterator[list[HttpServer]]:
    servers = [start_server(env, tmp_path) for _ in range(REPLICAS)]
    try:
        for server in servers:
            server.wait_ready()
        yield servers
    finally:
        codes = [server.stop() for server in servers]  # every one stopped before any code is judged
        assert codes == [0] * REPLICAS


async def test_sixteen_agents_on_four_replicas_claim_every_task_once(
    backend_env: dict[str, str], store: str, tmp_path: Path
) -> None:
    graph = _board(store, TASKS, LAYERS)
    names = [f"agent{n}" for n in range(AGENTS)]
    tokens = _tokens(store, names)
    events: list[tuple[str, dict[str, Any]]] = []
    with _replicas(backend_env, tmp_path) as servers:
        async with anyio.create_task_group() as agents:
            for n, name in enumerate(names):
                emit = lambda event, name=name: events.append((name, event))  # noqa: E731
                agents.start_soon(work, servers[n % REPLICAS].url, tokens[name], "auto", 900, emit)

    claims = Counter(event["task"] for _, event in events if event["event"] == "claimed")
    assert set(claims) == set(graph) and set(claims.values()) == {1}, "every task claimed exactly once"
    assert [event for _, event in events if event["event"] == "lost"] == []
    assert sum(event["event"] == "done" for _, event in events) == TASKS
    assert sum(event["event"] == "finished" for _, event in events) == AGENTS
    history = _history(store)
    started, done = _moves(history, "in_progress"), _moves(history, "done")
    assert {task: len(moves) for task, moves in started.items()} == dict.fromkeys(graph, 1)
    assert {task: len(moves) for task, moves in done.items()} == dict.fromkeys(graph, 1)
    claimed_by = {event["task"]: name for name, event in events if event["event"] == "claimed"}
    assert {task: moves[0]["principal"] for task, moves in started.items()} == claimed_by
    for task, deps in graph.items():
        for dep in deps:
            assert done[dep][0]["at"] <= started[task][0]["at"], f"{task} started before {dep} was done"
    with _opened(store) as db:
        assert db.execute("SELECT count(*) FROM tasks WHERE status <> 'done'").fetchone()[0] == 0


def _agent(url: str, token: str, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.domains.tasks.claim_agent", url, token, mode, "10"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


async def _line(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    with anyio.fail_after(60):
        line = await anyio.to_thread.run_sync(process.stdout.readline)
    assert line, f"agent {process.pid} exited with {process.poll()} before saying anything"
    event: dict[str, Any] = json.loads(line)
    return event


async def test_killed_and_paused_holders_lose_their_tasks_once_their_leases_end(
    postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    store = postgres_server.new_database()
    env = clean_env(tmp_path, COLIBRI_DB_URL=store)
    graph = _board(store, 24, 1)
    victims, survivors = [f"victim{n}" for n in range(4)], [f"survivor{n}" for n in range(4)]
    tokens = _tokens(store, [*victims, *survivors, "sleeper"])
    events: list[tuple[str, dict[str, Any]]] = []
    with _replicas(env, tmp_path) as servers:
        held = [_agent(servers[n].url, tokens[name], "hold") for n, name in enumerate(victims)]
        sleeper = _agent(servers[0].url, tokens["sleeper"], "pause")
        try:
            lost = {victims[n]: (await _line(process))["task"] for n, process in enumerate(held)}
            paused = await _line(sleeper)
            for process in held:
                process.kill()
            sleeper.send_signal(signal.SIGSTOP)
            async with anyio.create_task_group() as agents:
                for n, name in enumerate(survivors):
                    emit = lambda event, name=name: events.append((name, event))  # noqa: E731
                    agents.start_soon(work, servers[n].url, tokens[name], "auto", 60, emit)
            sleeper.send_signal(signal.SIGCONT)
            assert sleeper.stdin is not None
            sleeper.stdin.write("go\n")
            sleeper.stdin.flush()
            late = await _line(sleeper)
            assert sleeper.wait(30) == 0
        finally:
            for process in (*held, sleeper):
                if process.poll() is None:
                    process.send_signal(signal.SIGCONT)
                    process.kill()
                with process:  # closes its pipes, after waiting for it
                    pass
    assert [process.returncode for process in held] == [-9] * 4

    assert late == {"event": "late_write", "task": paused["task"], "code": "ERR_CONFLICT"}
    taken_over = {event["task"]: name for name, event in events if event.get("action") == "take_over"}
    assert set(taken_over) == {*lost.values(), paused["task"]}
    history = _history(store)
    for holder, task in (*lost.items(), ("sleeper", paused["task"])):
        moved = [entry for entry in history if entry["task"] == task and "lease_holder" in entry["changes"]]
        holders = [(entry["principal"], entry["changes"]["lease_holder"]) for entry in moved]
        assert holders[:2] == [
            (holder, {"from": None, "to": holder}),
            (taken_over[task], {"from": holder, "to": taken_over[task]}),
        ], "the history names the holder that died and the one that took over"
    done = _moves(history, "done")
    assert {task: len(moves) for task, moves in done.items()} == dict.fromkeys(graph, 1), "done once each"
    assert sum(event["event"] == "done" for _, event in events) == len(graph)
