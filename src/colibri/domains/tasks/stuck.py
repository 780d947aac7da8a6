"""The stuck tasks task_next_actions shows: the most urgent ones blocked or waiting on open or
cancelled work, each with what it waits on (and in which status) and why."""

from __future__ import annotations

from colibri.domains.tasks import board as boards
from colibri.domains.tasks import repository
from colibri.domains.tasks.board import Backlog, Stuck
from colibri.domains.tasks.models import PRIORITIES, BlockedTask
from colibri.domains.tasks.states import Status
from colibri.storage import Connection

BLOCKED_SHOWN = 50


def stuck(conn: Connection, backlog: Backlog) -> Stuck:
    """The most urgent stuck tasks (at most BLOCKED_SHOWN) and how many are stuck in all."""
    # One list per priority, each in index order: their concatenation is the (priority, age)
    # order, without sorting thousands of stuck tasks to show fifty.
    by_rank: list[list[int]] = [[] for _ in PRIORITIES]
    waiting, priorities = backlog.waiting, backlog.priorities
    for i, status in enumerate(backlog.statuses):
        if status == "blocked" or (status == "todo" and waiting[i]):
            by_rank[boards.RANK[priorities[i]]].append(i)
    shown = [i for rank in by_rank for i in rank][:BLOCKED_SHOWN]
    titles = repository.titles_of(conn, [backlog.ids[i] for i in shown])
    blocked = []
    for i in shown:
        task_id, status, waits = backlog.ids[i], backlog.statuses[i], boards.waiting_on(backlog, i)
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


def restated(shown: Stuck, backlog: Backlog, moved: set[str]) -> Stuck:
    """`shown` once tasks in `moved` changed status while staying open: the same stuck tasks, the
    same dependencies, only the statuses they name (no need to count and read titles again)."""
    blocked, total = shown
    again = []
    for task in blocked:
        if moved.isdisjoint(task.waiting_on):
            again.append(task)
            continue
        waits = boards.waiting_on(backlog, backlog.index[task.task_id])
        again.append(task.model_copy(update={"reason": _blocked_reason(task.status, waits)}))
    return again, total


def _blocked_reason(status: Status, waiting: list[tuple[str, str]]) -> str:
    waits = ", ".join(f"{dep} ({dep_status})" for dep, dep_status in waiting)
    cancelled = [dep for dep, dep_status in waiting if dep_status == "cancelled"]
    hint = f"; {', '.join(cancelled)} cancelled: reopen it or drop it from depends_on" if cancelled else ""
    if status != "blocked":
        return f"waits on {waits}{hint}"
    if waits:
        return f"marked blocked and waits on {waits}{hint}"
    return "marked blocked, dependencies done; move it to todo or in_progress once the obstacle is gone"
