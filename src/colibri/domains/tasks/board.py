"""A reading of the board: every open task as parallel lists, its ranking keys and its leases.

task_next_actions answers from such a reading (next_actions.py) and claims from it (claims.py).
Reading a 10,000-task board costs tens of milliseconds (most of it turning rows into Python
values, and on PostgreSQL bringing them over), and agents ask far more often than the board
changes. So a reading is kept (in the store's hints, storage/memo.py) with the
`task_board.version` it was read at; triggers move that version on any change to a task or a
dependency, so a call that finds it unchanged answers from what it kept, after one read. A call
that finds it moved reads only the tasks stamped since (changes.py), not the whole board.

"Open" means neither done nor cancelled. The unblocks count follows depends_on edges between
open tasks only: a closed task is not waiting on anything, and it does not pass waiting on.
A task closed after the whole read keeps its place in the lists (closed: none of the answers
looks at it, and the indices of the others hold) until the next whole read.
"""

from __future__ import annotations

import bisect
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Literal

from colibri.domains.tasks import graph
from colibri.domains.tasks.models import PRIORITIES, BlockedTask, NextActions, Priority
from colibri.domains.tasks.states import Status
from colibri.storage import Connection

ActionKind = Literal["continue", "review", "start", "take_over"]
RANK = {priority: rank for rank, priority in enumerate(PRIORITIES)}
_GROUP = {"in_progress": 0, "review": 1, "todo": 2}
CLAIMABLE = 2  # the group of start and take_over: ranked together
_SEPARATOR = ","  # task ids are T-<number>: never a comma
CLOSED = frozenset({"done", "cancelled"})


@dataclass(slots=True)
class Backlog:
    """The open tasks as parallel lists in creation order (a task's index is its position);
    lists of small tuples and ints keep the 10,000-task case fast."""

    ids: list[str] = field(default_factory=list)
    statuses: list[Status] = field(default_factory=list)
    priorities: list[Priority] = field(default_factory=list)
    holders: list[str | None] = field(default_factory=list)  # lease holders (in_progress only)
    expiries: list[str | None] = field(default_factory=list)
    depends_on: list[list[int]] = field(default_factory=list)  # open dependencies, by index
    cancelled_deps: dict[int, list[str]] = field(default_factory=dict)  # rare: kept apart
    # Worked out once and read by both lists: some dependency is not done (open or cancelled).
    waiting: list[bool] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)  # each task's number (its creation order)
    index: dict[str, int] = field(default_factory=dict)  # a task's position, by id
    closed: int = 0  # tasks closed since the whole read, still in the lists
    # The highest number any task had at the whole read, closed ones too: a task numbered above it
    # is new (nothing could wait on it before it existed); one at or below it, open and not in the
    # lists, was reopened, and its dependents' lists do not know it.
    last: int = 0


Stuck = tuple[list[BlockedTask], int]  # the blocked tasks shown, and how many there are in all


@dataclass(slots=True)
class Board:
    """A reading of the board at one `task_board.version`, and the answers given from it."""

    version: int
    backlog: Backlog
    unblocks: list[int]
    blocked: Stuck
    # Start and take_over candidates (todo or in_progress) in rank order: made by the first claim
    # that reads this board (`ranked`), carried to the boards claims leave.
    order: list[int] | None = None
    # (limit, principal) -> (answer, until): the answer holds until the first lease then running ends.
    answers: dict[tuple[int, str], tuple[NextActions, str | None]] = field(default_factory=dict)

    def kind(self, i: int, principal: str, now: str) -> ActionKind | None:
        """What `principal` may do with open task i now, if anything."""
        backlog = self.backlog
        status = backlog.statuses[i]
        if status == "review":
            return "review"
        if status == "todo":
            return None if backlog.waiting[i] else "start"
        if status != "in_progress":
            return None
        holder, expires = backlog.holders[i], backlog.expiries[i]
        if holder is None or holder == principal:
            return "continue"
        return "take_over" if expires is not None and expires <= now else None

    def ranked(self) -> list[int]:
        """The tasks a claim may take, best first (their kind for a caller is asked as it walks)."""
        if self.order is None:
            backlog, unblocks = self.backlog, self.unblocks
            priorities = backlog.priorities
            candidates = _candidates(backlog)
            self.order = sorted(candidates, key=lambda i: (RANK[priorities[i]], -unblocks[i], i))
        return self.order

    def until(self, now: str) -> str | None:
        """When the first lease still running ends (answers change then), or None."""
        ends = sorted(e for e in self.backlog.expiries if e is not None)
        at = bisect.bisect_right(ends, now)
        return ends[at] if at < len(ends) else None

    def claimed(self, i: int, principal: str, expires: str, version: int) -> Board:
        """This reading after task i was claimed (the one change a claim makes), as a new reading:
        a kept one is never changed in place, since a rolled-back claim must leave it as it was."""
        old = self.backlog
        statuses, holders, expiries = list(old.statuses), list(old.holders), list(old.expiries)
        statuses[i], holders[i], expiries[i] = "in_progress", principal, expires
        backlog = replace(old, statuses=statuses, holders=holders, expiries=expiries)
        return Board(version, backlog, self.unblocks, self.blocked, self.ranked())


def version_of(conn: Connection) -> int:
    return int(conn.execute("SELECT version FROM task_board WHERE id = 1").fetchone()[0])


def read(conn: Connection, version: int, blocked: Callable[[Connection, Backlog], Stuck]) -> Board:
    """The board as it is now; `blocked(conn, backlog)` makes its list of stuck tasks."""
    with _no_collection():
        backlog = _load(conn)
        unblocks = graph.transitive_dependent_counts(backlog.depends_on)
        return Board(version, backlog, unblocks, blocked(conn, backlog))


def _candidates(backlog: Backlog) -> Iterator[int]:
    waiting = backlog.waiting
    for i, status in enumerate(backlog.statuses):
        if status == "in_progress" or (status == "todo" and not waiting[i]):
            yield i


def ready(board: Board, principal: str, now: str) -> Iterator[tuple[int, int, int, int]]:
    """Sort keys of the tasks `principal` can act on now; the last item is the task's index, which
    also orders ties by age (index follows creation order)."""
    backlog, unblocks, kind = board.backlog, board.unblocks, board.kind
    priorities, waiting = backlog.priorities, backlog.waiting
    for i, status in enumerate(backlog.statuses):
        group = _GROUP.get(status)
        if group is None or (status == "todo" and waiting[i]):
            continue
        if status == "in_progress":
            what = kind(i, principal, now)
            if what is None:
                continue
            if what == "take_over":
                group = CLAIMABLE
        yield group, RANK[priorities[i]], -unblocks[i], i


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


def _load(conn: Connection) -> Backlog:
    """Every open task, and every edge between open tasks, in two statements.

    Measured on 10,000 tasks / 20,000 edges: letting PostgreSQL join the edges to the open
    tasks costs more (hash joins on text ids) than sorting them into place here with one dict
    lookup per end; what costs is turning 20,000 rows into Python tuples, so the edges come as
    one joined text, split in C.
    """
    # A lease counts only while its task is in_progress (Colibri ends it when the task leaves).
    rows = conn.tuples(
        "SELECT number, id, status, priority,"
        " CASE WHEN status = 'in_progress' THEN lease_holder END,"
        " CASE WHEN status = 'in_progress' THEN lease_expires_at END"
        " FROM tasks WHERE status NOT IN ('done', 'cancelled') ORDER BY number"
    ).fetchall()
    last = int(conn.execute("SELECT COALESCE(MAX(number), 0) FROM tasks").fetchone()[0])
    if not rows:
        return Backlog(last=last)
    numbers, ids, statuses, priorities, holders, expiries = (
        list(column) for column in zip(*rows, strict=True)
    )
    positions = dict(zip(ids, range(len(ids)), strict=True))
    index = positions.get
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
    return Backlog(
        ids,
        statuses,
        priorities,
        holders,
        expiries,
        depends_on,
        cancelled_deps,
        waiting,
        numbers,
        positions,
        last=last,
    )


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


def waiting_on(backlog: Backlog, i: int) -> list[tuple[str, str]]:
    """What task i waits on, as (id, status), oldest dependency first."""
    pairs = [(backlog.ids[j], backlog.statuses[j]) for j in backlog.depends_on[i]]
    pairs.extend((dep, "cancelled") for dep in backlog.cancelled_deps.get(i, ()))
    return sorted(pairs, key=lambda pair: int(pair[0].removeprefix("T-")))
