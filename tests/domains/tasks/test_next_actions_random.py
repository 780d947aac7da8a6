"""task_next_actions on random graphs: both backends give the same answer, and it is the answer a
plain reference (graph search per task, a full sort) gives from the generated rows themselves."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from colibri.domains.tasks.next_actions import next_actions
from colibri.domains.tasks.stuck import BLOCKED_SHOWN
from colibri.storage import Database, SQLiteDatabase, open_database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.helpers import postgres as pg

STATUSES = ("todo", "todo", "todo", "in_progress", "review", "blocked", "done", "cancelled")
PRIORITIES = ("critical", "high", "medium", "low")
NOW = "2026-01-01T00:00:00Z"

Graph = tuple[list[tuple[int, str, str, str]], list[tuple[int, int]]]


def random_graph(seed: int, tasks: int, edges: int) -> Graph:
    """(number, id, status, priority) per task and (task, dependency) numbers, newer on older."""
    rng = random.Random(seed)
    rows = [(n, f"T-{n}", rng.choice(STATUSES), rng.choice(PRIORITIES)) for n in range(1, tasks + 1)]
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < edges:
        a = rng.randrange(2, tasks + 1)
        pairs.add((a, rng.randrange(1, a)))
    return rows, sorted(pairs)


def write(db: Database, graph: Graph) -> None:
    rows, pairs = graph
    with db.atomic() as conn:
        conn.executemany(
            "INSERT INTO tasks (number, id, title, status, priority, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(n, task_id, f"task {n}", status, prio, NOW, NOW) for n, task_id, status, prio in rows],
        )
        conn.executemany(
            "INSERT INTO task_dependencies (task_id, depends_on, position) VALUES (?, ?, ?)",
            [(f"T-{a}", f"T-{b}", position) for position, (a, b) in enumerate(pairs)],
        )


def reference(graph: Graph, limit: int) -> tuple[list[tuple[str, int]], list[tuple[str, list[str]]], int]:
    """The ranking of SPEC §4 written the slow, obvious way: (id, unblocks) of the actions,
    (id, waiting_on) of the blocked tasks shown, and how many are blocked."""
    rows, pairs = graph
    status = {n: s for n, _, s, _ in rows}
    prio = {n: PRIORITIES.index(p) for n, _, _, p in rows}
    is_open = {n: s not in ("done", "cancelled") for n, s in status.items()}
    deps: dict[int, list[int]] = {n: [] for n in status}
    dependents: dict[int, list[int]] = {n: [] for n in status}
    for a, b in pairs:
        deps[a].append(b)
        if is_open[a] and is_open[b]:
            dependents[b].append(a)

    def unblocks(n: int) -> int:
        seen, stack = {n}, [n]
        while stack:
            for m in dependents[stack.pop()]:
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        return len(seen) - 1

    waits = {n: sorted(d for d in deps[n] if status[d] != "done") for n in status}
    group = {"in_progress": 0, "review": 1, "todo": 2}
    ready = [n for n in status if status[n] in group and not (status[n] == "todo" and waits[n])]
    ready.sort(key=lambda n: (group[status[n]], prio[n], -unblocks(n), n))
    stuck = [n for n in status if status[n] == "blocked" or (status[n] == "todo" and waits[n])]
    stuck.sort(key=lambda n: (prio[n], n))
    actions = [(f"T-{n}", unblocks(n)) for n in ready[:limit]]
    blocked = [(f"T-{n}", [f"T-{d}" for d in waits[n]]) for n in stuck[:BLOCKED_SHOWN]]
    return actions, blocked, len(stuck)


@pytest.fixture
def both(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> Iterator[Callable[[], tuple[Database, Database]]]:
    """Opens a fresh migrated store on each backend."""
    opened: list[Database] = []

    def open_both() -> tuple[Database, Database]:
        sqlite = SQLiteDatabase.open(tmp_path / f"random-{len(opened)}.db")
        migrate(sqlite, MIGRATIONS)
        postgres = open_database(postgres_server.new_database())
        opened.extend((sqlite, postgres))
        return sqlite, postgres

    yield open_both
    for db in opened:
        db.close()


@pytest.mark.parametrize(("seed", "tasks", "edges"), [(1, 60, 90), (2, 400, 900), (3, 1500, 3000)])
def test_both_backends_give_the_reference_answer(
    both: Callable[[], tuple[Database, Database]], seed: int, tasks: int, edges: int
) -> None:
    graph = random_graph(seed, tasks, edges)
    sqlite, postgres = both()
    write(sqlite, graph)
    write(postgres, graph)
    limit = 25
    on_sqlite, on_postgres = next_actions(sqlite, limit), next_actions(postgres, limit)
    assert on_sqlite == on_postgres
    actions, blocked, total = reference(graph, limit)
    assert [(a.task.id, a.unblocks) for a in on_sqlite.actions] == actions
    assert [(b.task_id, b.waiting_on) for b in on_sqlite.blocked] == blocked
    assert on_sqlite.blocked_total == total


def test_an_id_holding_a_comma_is_still_read_right(fresh_db: Database) -> None:
    """Edges travel as one comma-joined text; a hand-edited id with a comma must not garble them."""
    with fresh_db.atomic() as conn:
        conn.executemany(
            "INSERT INTO tasks (number, id, title, status, priority, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (1, "T-1", "first", "in_progress", "high", NOW, NOW),
                (2, "T-2,T-1", "odd id", "todo", "high", NOW, NOW),
                (3, "T-3", "third", "todo", "low", NOW, NOW),
            ],
        )
        conn.executemany(
            "INSERT INTO task_dependencies (task_id, depends_on, position) VALUES (?, ?, ?)",
            [("T-2,T-1", "T-1", 0), ("T-3", "T-1", 0)],
        )
    result = next_actions(fresh_db, 5)
    assert [(a.task.id, a.unblocks) for a in result.actions] == [("T-1", 2)]
    assert [(b.task_id, b.waiting_on) for b in result.blocked] == [("T-2,T-1", ["T-1"]), ("T-3", ["T-1"])]
    assert result.blocked_total == 2
