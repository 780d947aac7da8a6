"""task_next_actions: what to do now, ranked and explained, and what is stuck.

Ranking (SPEC §4): every `continue` (in_progress), then every `review`, then `start` for todo
tasks whose dependencies are all done. Within each group: priority, then how many open tasks
wait on the task transitively (more first), then the oldest first.

"Open" means neither done nor cancelled. The unblocks count follows depends_on edges between
open tasks only: a closed task is not waiting on anything, and it does not pass waiting on.

Reading a 10,000-task board costs tens of milliseconds (most of it turning rows into Python
values, and on PostgreSQL bringing them over), and agents ask far more often than the board
changes. So the board's reading is kept (in the store's hints, storage/memo.py) with the
`task_board.version` it was read at; triggers move that version on any change to a task or a
dependency, so a call that finds it unchanged answers from what it kept, after one read.
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from colibri.domains.tasks import graph, repository
from colibri.domains.tasks.models import PRIORITIES, Action, BlockedTask, NextActions, Priority, Task
from colibri.domains.tasks.states import Status
from colibri.storage import Connection, Database

BLOCKED_SHOWN = 50
_RANK = {priority: rank for rank, priority in enumerate(PRIORITIES)}
_GROUP = {"in_progress": 0, "review": 1, "todo": 2}
_TODO = _GROUP["todo"]
_SEPARATOR = ","  # task ids are T-<number>: never a comma


@dataclass(slots=True)
class _Backlog:
    """The open tasks as parallel lists in creation order (a task's index is its position);
    lists of small tuples and ints keep the 10,000-task case fast."""

    ids: list[str] = field(default_factory=list)
    statuses: list[Status] = field(default_factory=list)
    priorities: list[Priority] = field(default_factory=list)
    depends_on: list[list[int]] = field(default_factory=list)  # open dependencies, by index
    cancelled_deps: dict[int, list[str]] = field(default_factory=dict)  # rare: kept apart
    # Worked out once and read by both lists: some dependency is not done (open or cancelled).
    waiting: list[bool] = field(default_factory=list)


_BOARD = "tasks.board"


@dataclass(slots=True)
class _Board:
    """A reading of the board at one `task_board.version`, and the answers given from it."""

    version: int
    backlog: _Backlog
    unblocks: list[int]
    blocked: tuple[list[BlockedTask], int]
    answers: dict[int, NextActions] = field(default_factory=dict)


def next_actions(db: Database, limit: int) -> NextActions:
    # Inside a write transaction the version may be one of its own, undone if it rolls back and
    # then given to another change: such a reading is never kept.
    keep = not db.in_transaction
    with db.snapshot() as conn:
        version = int(conn.execute("SELECT version FROM task_board WHERE id = 1").fetchone()[0])
        board = conn.hints.get(_BOARD) if keep else None
        if not isinstance(board, _Board) or board.version != version:
            with _no_collection():
                board = _read_board(conn, version)
            if keep:
                conn.hints[_BOARD] = board
        answer = board.answers.get(limit)
        if answer is None:
            blocked, blocked_total = board.blocked
            actions = _actions(conn, board.backlog, board.unblocks, limit)
            answer = NextActions(actions=actions, blocked=blocked, blocked_total=blocked_total)
            board.answers[limit] = answer
        return answer


def _read_board(conn: Connection, version: int) -> _Board:
    backlog = _load(conn)
    unblocks = graph.transitive_dependent_counts(backlog.depends_on)
    return _Board(version, backlog, unblocks, _blocked(conn, backlog))


@contextmanager
def _no_collection() -> Iterator[None]:
    """Holds off the cyclic garbage collector for one computation.

    A 10,000-task backlog builds tens of thousands of rows and lists that live to the end of
    the call: they survive the young generations' collections, so every few calls they push
    the collector into a full pass over the whole process (measured: about 100 ms, the p95 of
    the call). They hold no cycles and die by reference counting when the call returns, so
    the collections find nothing; skipping them loses nothing. The previous state is restored,
    and a call made with the collector already off leaves it off.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _actions(conn: Connection, backlog: _Backlog, unblocks: list[int], limit: int) -> list[Action]:
    chosen = [i for *_, i in heapq.nsmallest(limit, _ready(backlog, unblocks))]
    full = repository.get_tasks(conn, [backlog.ids[i] for i in chosen])
    actions = []
    for i in chosen:
        task = full[backlog.ids[i]]
        reason = _reason(task, unblocks[i])
        actions.append(Action(task=task, action=_ACTION[task.status], reason=reason, unblocks=unblocks[i]))
    return actions


def _blocked(conn: Connection, backlog: _Backlog) -> tuple[list[BlockedTask], int]:
    """The most urgent stuck tasks (at most BLOCKED_SHOWN) and how many are stuck in all."""
    # One list per priority, each in index order: their concatenation is the (priority, age)
    # order, without sorting thousands of stuck tasks to show fifty.
    by_rank: list[list[int]] = [[] for _ in PRIORITIES]
    waiting, priorities = backlog.waiting, backlog.priorities
    for i, status in enumerate(backlog.statuses):
        if status == "blocked" or (status == "todo" and waiting[i]):
            by_rank[_RANK[priorities[i]]].append(i)
    shown = [i for stuck in by_rank for i in stuck][:BLOCKED_SHOWN]
    titles = repository.titles_of(conn, [backlog.ids[i] for i in shown])
    blocked = []
    for i in shown:
        task_id, status, waits = backlog.ids[i], backlog.statuses[i], _waiting(backlog, i)
        blocked.append(
            BlockedTask(
                task_id=task_id,
                title=titles[task_id],
                status=status,
                waiting_on=[dep for dep, _ in waits],
                reason=_blocked_reason(status, waits),
            )
        )
    return blocked, sum(map(len, by_rank))


def _ready(backlog: _Backlog, unblocks: list[int]) -> Iterator[tuple[int, int, int, int]]:
    """Sort keys of the tasks one can act on now; the last item is the task's index, which also
    orders ties by age (index follows creation order)."""
    waiting, priorities = backlog.waiting, backlog.priorities
    for i, status in enumerate(backlog.statuses):
        group = _GROUP.get(status)
        if group is None or (group == _TODO and waiting[i]):
            continue
        yield group, _RANK[priorities[i]], -unblocks[i], i


def _load(conn: Connection) -> _Backlog:
    """Every open task, and every edge between open tasks, in two statements.

    Measured on 10,000 tasks / 20,000 edges: letting PostgreSQL join the edges to the open
    tasks costs more (hash joins on text ids) than sorting them into place here with one dict
    lookup per end; what costs is turning 20,000 rows into Python tuples, so the edges come as
    one joined text, split in C.
    """
    rows = conn.tuples(
        "SELECT id, status, priority FROM tasks WHERE status NOT IN ('done', 'cancelled') ORDER BY number"
    ).fetchall()
    if not rows:
        return _Backlog()
    ids, statuses, priorities = (list(column) for column in zip(*rows, strict=True))
    index = dict(zip(ids, range(len(ids)), strict=True)).get
    depends_on: list[list[int]] = [[] for _ in ids]
    closed: list[tuple[int, str]] = []  # edges from an open task to a done or cancelled one
    ends = iter(_edge_ends(conn))
    for task_id, dep in zip(ends, ends, strict=True):
        i = index(task_id)
        if i is None:
            continue
        j = index(dep)
        if j is None:
            closed.append((i, dep))
        else:
            depends_on[i].append(j)
    cancelled_deps: dict[int, list[str]] = {}
    if closed:
        cancelled = {row[0] for row in conn.tuples("SELECT id FROM tasks WHERE status = 'cancelled'")}
        for i, dep in closed:
            if dep in cancelled:
                cancelled_deps.setdefault(i, []).append(dep)
    waiting = [bool(deps) for deps in depends_on]
    for i in cancelled_deps:
        waiting[i] = True
    return _Backlog(ids, statuses, priorities, depends_on, cancelled_deps, waiting)


def _edge_ends(conn: Connection) -> list[str]:
    """Every depends_on edge as two items, task then dependency, flattened into one list."""
    joined = conn.dialect.joined(f"task_id || '{_SEPARATOR}' || depends_on", _SEPARATOR)
    count, text = conn.tuples(f"SELECT count(*), {joined} FROM task_dependencies").fetchone()
    ends: list[str] = text.split(_SEPARATOR) if count else []
    if len(ends) != 2 * count:
        # An id holding the separator (only a hand-edited database has one): read rows instead.
        rows = conn.tuples("SELECT task_id, depends_on FROM task_dependencies").fetchall()
        ends = [end for row in rows for end in row]
    return ends


def _waiting(backlog: _Backlog, i: int) -> list[tuple[str, str]]:
    """What task i waits on, as (id, status), oldest dependency first."""
    pairs = [(backlog.ids[j], backlog.statuses[j]) for j in backlog.depends_on[i]]
    pairs.extend((dep, "cancelled") for dep in backlog.cancelled_deps.get(i, ()))
    return sorted(pairs, key=lambda pair: int(pair[0].removeprefix("T-")))


_ACTION: dict[Status, Literal["continue", "review", "start"]] = {
    "in_progress": "continue",
    "review": "review",
    "todo": "start",
}


def _reason(task: Task, unblocks: int) -> str:
    status, priority = task.status, task.priority
    unblocking = f"; unblocks {_plural(unblocks, 'open task')}" if unblocks else ""
    if status == "in_progress":
        return f"in progress, {priority} priority{unblocking}; finish it, then move it to review"
    if status == "review":
        return (
            f"waiting for review, {priority} priority{unblocking}; check the work, write it back "
            "(thought_record citing the task), then move it to done, or back to in_progress"
        )
    count = len(task.depends_on)
    deps = f"all {_plural(count, 'dependency')} done" if count else "no dependencies"
    return f"ready to start ({deps}), {priority} priority{unblocking}; move it to in_progress"


def _blocked_reason(status: Status, waiting: list[tuple[str, str]]) -> str:
    waits = ", ".join(f"{dep} ({dep_status})" for dep, dep_status in waiting)
    cancelled = [dep for dep, dep_status in waiting if dep_status == "cancelled"]
    hint = f"; {', '.join(cancelled)} cancelled: reopen it or drop it from depends_on" if cancelled else ""
    if status != "blocked":
        return f"waits on {waits}{hint}"
    if waits:
        return f"marked blocked and waits on {waits}{hint}"
    return "marked blocked, dependencies done; move it to todo or in_progress once the obstacle is gone"


def _plural(count: int, noun: str) -> str:
    if count == 1:
        return f"1 {noun}"
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{count} {plural}"
