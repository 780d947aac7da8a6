"""Bringing a kept reading of the board up to date from the tasks that changed since it was read.

The triggers that move `task_board.version` stamp each task they see change with the version they
moved it to (schema.py, migration 0036). A reading kept at version K catches up with the board at
version V by reading the tasks stamped above K (their edges too where those changed) and patching
its lists: a claim that finds the board moved by another replica reads one task, not 10,000.

Why a catch-up never misses a change, even one committed out of order. Every change to tasks or
task_dependencies moves the version in its own transaction, by an UPDATE of task_board's one row,
whose lock is then held until that transaction ends; its stamps take the version it moved to. A
second writer's UPDATE waits for the row until the first has committed (PostgreSQL releases row
locks only after the commit is visible to every new snapshot; SQLite has one writer at a time) and
then moves the version on from where the first left it. So versions are taken in commit order, a
snapshot that sees version V sees every change stamped V or below and none stamped above, and
every change it does not see is stamped above V. This holds outside the store's write lock too: an
unclaimed task_next_actions reads the version and the stamps in one snapshot (REPEATABLE READ on
PostgreSQL, one read transaction on SQLite). A claim reads under the write lock in READ COMMITTED,
each statement in a snapshot of its own, none older than the one that read V: it may see a hand
edit committed after V, and labels it V anyway; the next catch-up from V applies it again, which
is harmless since a patch sets each task to its current state. task_list reads the tables in one
snapshot and keeps nothing.

What a patch cannot follow sends the caller to a whole read: more than GAP changed tasks, a task
deleted (a TRUNCATE stamps ''), one reopened after it was closed, an id or number changed by hand,
or more closed tasks left in the lists than a quarter of them.
"""

from __future__ import annotations

from colibri.domains.tasks import graph, repository
from colibri.domains.tasks.board import CLOSED, Backlog, Board
from colibri.domains.tasks.models import Priority
from colibri.domains.tasks.states import Status
from colibri.domains.tasks.stuck import restated, stuck
from colibri.storage import Connection

GAP = 500  # changed tasks; beyond, reading them one by one costs about what a whole read does
_CHANGED = (
    "SELECT s.task_id, s.edges > ?, t.number, t.status, t.priority,"
    " CASE WHEN t.status = 'in_progress' THEN t.lease_holder END,"
    " CASE WHEN t.status = 'in_progress' THEN t.lease_expires_at END"
    " FROM task_stamps s LEFT JOIN tasks t ON t.id = s.task_id"
    " WHERE s.version > ? ORDER BY t.number LIMIT ?"
)


def caught_up(conn: Connection, kept: Board, version: int) -> Board | None:
    """`kept` brought to `version` (the board's version as this snapshot sees it), or None when only
    a whole read will do. `kept` itself is never changed: a new reading is returned."""
    rows = conn.tuples(_CHANGED, (kept.version, kept.version, GAP + 1)).fetchall()
    if len(rows) > GAP:
        return None
    patch = _Patch(kept)
    for task_id, edges, number, status, priority, holder, expires in rows:
        if number is None or not patch.apply(task_id, number, status, priority, holder, expires, bool(edges)):
            return None
    patch.close()
    patch.relink(conn)
    backlog = patch.backlog()
    if backlog.closed > len(backlog.ids) // 4 + 64:
        return None
    unblocks = patch.unblocks()
    order = None if patch.reordered() else kept.order
    if patch.restuck():
        shown = stuck(conn, backlog)
    else:
        shown = restated(kept.blocked, backlog, {backlog.ids[i] for i in patch.touched})
    return Board(version, backlog, unblocks, shown, order)


class _Patch:
    """The kept reading's lists, copied, and what changed in them."""

    def __init__(self, kept: Board) -> None:
        old = self.old = kept.backlog
        self.kept = kept
        self.statuses, self.priorities = list(old.statuses), list(old.priorities)
        self.holders, self.expiries = list(old.holders), list(old.expiries)
        self.ids, self.numbers, self.index = old.ids, old.numbers, old.index  # copied once grown
        self.last = old.last
        self.depends_on = list(old.depends_on)  # each inner list is replaced, never changed
        self.cancelled = dict(old.cancelled_deps)
        self.waiting = list(old.waiting)
        self.touched: set[int] = set()  # tasks whose row or waiting changed
        self.added: list[int] = []
        self.linked: list[int] = []  # tasks whose edges are read again
        self.closing: dict[int, Status] = {}
        self.regraph = False  # the open graph changed beyond what the patch counts itself

    def apply(  # noqa: PLR0917 - one changed row, as selected
        self,
        task_id: str,
        number: int,
        status: Status,
        priority: Priority,
        holder: str | None,
        expires: str | None,
        edges: bool,
    ) -> bool:
        """Set one changed task to its row; False when only a whole read can follow the change."""
        i = self.index.get(task_id)
        if i is None:
            if status in CLOSED:  # never open while kept: nothing shows it, but it exists
                self.last = max(self.last, number)
                return True
            if number <= self.last:
                return False  # reopened after a whole read that left it out, or renumbered
            i = self._append(task_id, number)
        elif self.numbers[i] != number:
            return False
        elif self.statuses[i] in CLOSED:
            return status == self.statuses[i]  # a closed task stays out; reopened, it needs a whole read
        elif status in CLOSED:
            self.closing[i] = status
        elif edges:
            self.linked.append(i)
            self.regraph = True
        self.touched.add(i)
        self.statuses[i], self.priorities[i] = status, priority
        self.holders[i], self.expiries[i] = holder, expires
        return True

    def _append(self, task_id: str, number: int) -> int:
        if not self.added:
            self.ids, self.numbers, self.index = list(self.ids), list(self.numbers), dict(self.index)
        i = len(self.ids)
        self.ids.append(task_id)
        self.numbers.append(number)
        self.last = number
        self.index[task_id] = i
        for column in (self.statuses, self.priorities, self.holders, self.expiries):
            column.append(None)  # type: ignore[arg-type]  # set by apply at once
        self.depends_on.append([])
        self.waiting.append(False)
        self.added.append(i)
        self.linked.append(i)
        return i

    def close(self) -> None:
        """Closed tasks leave the graph: their dependents stop waiting on a done one, and keep
        waiting on a cancelled one as the whole read shows it."""
        gone = self.closing
        if not gone:
            return
        for d in gone:
            # A task closed while it had open dependencies took part in their counts.
            self.regraph = self.regraph or bool(self.depends_on[d])
            self.depends_on[d] = []
            self.cancelled.pop(d, None)
            self.waiting[d] = False
        for y, deps in enumerate(self.depends_on):
            if not deps or gone.keys().isdisjoint(deps):
                continue
            self.depends_on[y] = [j for j in deps if j not in gone]
            dropped = [self.ids[j] for j in deps if gone.get(j) == "cancelled"]
            if dropped:
                self.cancelled[y] = [*self.cancelled.get(y, ()), *dropped]
            self.waiting[y] = bool(self.depends_on[y]) or y in self.cancelled
            self.touched.add(y)

    def relink(self, conn: Connection) -> None:
        """Read again the edges of new tasks and of tasks whose depends_on changed."""
        linked = [i for i in self.linked if self.statuses[i] not in CLOSED]
        if not linked:
            return
        edges = repository.dependencies_of(conn, [self.ids[i] for i in linked])
        outside = [dep for deps in edges.values() for dep in deps if dep not in self.index]
        # Dependencies closed before the whole read are not in the lists: their status is asked.
        statuses = repository.statuses_of(conn, outside) if outside else {}
        for i in linked:
            open_deps: list[int] = []
            cancelled: list[str] = []
            for dep in edges.get(self.ids[i], ()):
                j = self.index.get(dep)
                status = self.statuses[j] if j is not None else statuses.get(dep)
                if j is not None and status not in CLOSED:
                    open_deps.append(j)
                elif status == "cancelled":
                    cancelled.append(dep)
            self.depends_on[i] = open_deps
            if cancelled:
                self.cancelled[i] = cancelled
            else:
                self.cancelled.pop(i, None)
            self.waiting[i] = bool(open_deps or cancelled)

    def backlog(self) -> Backlog:
        closed = self.old.closed + len(self.closing)
        return Backlog(
            self.ids,
            self.statuses,
            self.priorities,
            self.holders,
            self.expiries,
            self.depends_on,
            self.cancelled,
            self.waiting,
            self.numbers,
            self.index,
            closed,
            self.last,
        )

    def unblocks(self) -> list[int]:
        """The counts: unchanged by status moves and by closing a task no open task waited under;
        a new task adds one to each task it waits on, directly or not; anything else counts again."""
        if self.regraph:
            return graph.transitive_dependent_counts(self.depends_on)
        if not self.added:
            return self.kept.unblocks
        counts = [*self.kept.unblocks, *(0 for _ in self.added)]
        depends_on = self.depends_on
        for i in self.added:
            seen = {i}
            stack = [i]
            while stack:
                for j in depends_on[stack.pop()]:
                    if j not in seen:
                        seen.add(j)
                        counts[j] += 1
                        stack.append(j)
        return counts

    def reordered(self) -> bool:
        """Whether the claimable tasks or their ranking keys may have changed."""
        if self.regraph or self.added:
            return True
        old = self.old
        return any(
            _claimable(old.statuses[i], old.waiting[i]) != _claimable(self.statuses[i], self.waiting[i])
            or old.priorities[i] != self.priorities[i]
            for i in self.touched
        )

    def restuck(self) -> bool:
        """Whether the stuck tasks may have changed (not only the statuses they name)."""
        if self.regraph:
            return True
        old = self.old
        for i in self.touched:
            before = i < len(old.ids) and _stuck(old.statuses[i], old.waiting[i])
            if before or _stuck(self.statuses[i], self.waiting[i]):
                return True
        return False


def _claimable(status: str, waiting: bool) -> bool:
    return status == "in_progress" or (status == "todo" and not waiting)


def _stuck(status: str, waiting: bool) -> bool:
    return status == "blocked" or (status == "todo" and waiting)
