"""task_next_actions: what to do now, ranked and explained, and what is stuck.

Ranking (SPEC §4): every `continue` (in_progress), then every `review`, then `start` for todo
tasks whose dependencies are all done. Within each group: priority, then how many open tasks
wait on the task transitively (more first), then the oldest first.

"Open" means neither done nor cancelled. The unblocks count follows depends_on edges between
open tasks only: a closed task is not waiting on anything, and it does not pass waiting on.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from colibri.domains.tasks import graph, repository
from colibri.domains.tasks.models import PRIORITIES, Action, BlockedTask, NextActions, Priority, Task
from colibri.domains.tasks.states import Status
from colibri.storage import Connection, Database

BLOCKED_SHOWN = 50
_RANK = {priority: rank for rank, priority in enumerate(PRIORITIES)}
_GROUP = {"in_progress": 0, "review": 1, "todo": 2}


@dataclass(slots=True)
class _Backlog:
    """The open tasks as parallel lists in creation order (a task's index is its position);
    lists of small tuples and ints keep the 10,000-task case fast."""

    ids: list[str] = field(default_factory=list)
    statuses: list[Status] = field(default_factory=list)
    priorities: list[Priority] = field(default_factory=list)
    depends_on: list[list[int]] = field(default_factory=list)  # open dependencies, by index
    cancelled_deps: dict[int, list[str]] = field(default_factory=dict)  # rare: kept apart

    def is_waiting(self, i: int) -> bool:
        """True when some dependency of task i is not done (open ones, or cancelled ones)."""
        return bool(self.depends_on[i]) or i in self.cancelled_deps


def next_actions(db: Database, limit: int) -> NextActions:
    with db.snapshot() as conn:
        return _next_actions(conn, limit)


def _next_actions(conn: Connection, limit: int) -> NextActions:
    backlog = _load(conn)
    unblocks = graph.transitive_dependent_counts(backlog.depends_on)
    blocked, blocked_total = _blocked(conn, backlog)
    return NextActions(
        actions=_actions(conn, backlog, unblocks, limit), blocked=blocked, blocked_total=blocked_total
    )


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
    stuck = [
        i
        for i, status in enumerate(backlog.statuses)
        if status == "blocked" or (status == "todo" and backlog.is_waiting(i))
    ]
    shown = heapq.nsmallest(BLOCKED_SHOWN, stuck, key=lambda i: (_RANK[backlog.priorities[i]], i))
    titles = _titles(conn, [backlog.ids[i] for i in shown])
    blocked = []
    for i in shown:
        task_id, status, waiting = backlog.ids[i], backlog.statuses[i], _waiting(backlog, i)
        blocked.append(
            BlockedTask(
                task_id=task_id,
                title=titles[task_id],
                status=status,
                waiting_on=[dep for dep, _ in waiting],
                reason=_blocked_reason(status, waiting),
            )
        )
    return blocked, len(stuck)


def _ready(backlog: _Backlog, unblocks: list[int]) -> Iterator[tuple[int, int, int, int]]:
    """Sort keys of the tasks one can act on now; the last item is the task's index, which also
    orders ties by age (index follows creation order)."""
    for i, status in enumerate(backlog.statuses):
        group = _GROUP.get(status)
        if group is None or (status == "todo" and backlog.is_waiting(i)):
            continue
        yield group, _RANK[backlog.priorities[i]], -unblocks[i], i


def _load(conn: Connection) -> _Backlog:
    backlog = _Backlog()
    # plain tuples: this reads every open task and every edge
    rows = conn.tuples(
        "SELECT id, status, priority FROM tasks WHERE status NOT IN ('done', 'cancelled') ORDER BY number"
    )
    for task_id, status, priority in rows:
        backlog.ids.append(task_id)
        backlog.statuses.append(status)
        backlog.priorities.append(priority)
    index = {task_id: i for i, task_id in enumerate(backlog.ids)}
    depends_on: list[list[int]] = [[] for _ in backlog.ids]
    cancelled = {row[0] for row in conn.tuples("SELECT id FROM tasks WHERE status = 'cancelled'")}
    # Reading every edge and skipping closed tasks here is cheaper than a join per edge in SQL;
    # this loop is the hot path, so it does no more than sort each edge into place.
    for task_id, dep in conn.tuples("SELECT task_id, depends_on FROM task_dependencies"):
        i = index.get(task_id)
        if i is None:
            continue
        j = index.get(dep)
        if j is not None:
            depends_on[i].append(j)
        elif dep in cancelled:
            backlog.cancelled_deps.setdefault(i, []).append(dep)
    backlog.depends_on = depends_on
    return backlog


def _waiting(backlog: _Backlog, i: int) -> list[tuple[str, str]]:
    """What task i waits on, as (id, status), oldest dependency first."""
    pairs = [(backlog.ids[j], backlog.statuses[j]) for j in backlog.depends_on[i]]
    pairs.extend((dep, "cancelled") for dep in backlog.cancelled_deps.get(i, ()))
    return sorted(pairs, key=lambda pair: int(pair[0].removeprefix("T-")))


def _titles(conn: Connection, task_ids: list[str]) -> dict[str, str]:
    return {task.id: task.title for task in repository.get_tasks(conn, task_ids).values()}


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
