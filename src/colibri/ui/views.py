"""What the board and a task's page show, read through the domains' functions in one snapshot.

Every list is a keyset page (a task's number, a record's seq), so a page costs the same over ten
tasks or ten thousand. The trail's pages are in trail_views.py, the audit's in audit_views.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from colibri.core.clock import utc_now
from colibri.core.cursor import decode_cursor, encode_cursor
from colibri.core.database import Database
from colibri.domains.tasks import repository as tasks
from colibri.domains.tasks.arguments import ListTasksArgs
from colibri.domains.tasks.listing import count_matching, list_tasks
from colibri.domains.tasks.models import Task
from colibri.domains.tasks.next_actions import next_actions
from colibri.domains.tasks.service import get_task_detail
from colibri.domains.trail import repository as trail
from colibri.ui.graph import Graph, lay_out
from colibri.ui.marks import record_marks

STATUSES = ("todo", "in_progress", "blocked", "review", "done", "cancelled")
PAGE = 50


@dataclass(frozen=True, slots=True)
class BoardFilter:
    """What the board is narrowed to (query parameters `assignee`, `tag`, `text`; all must match)."""

    assignee: str | None = None
    tag: str | None = None
    text: str | None = None

    def given(self) -> dict[str, str]:
        """The filters set, by name, for links that keep them."""
        fields = {"assignee": self.assignee, "tag": self.tag, "text": self.text}
        return {name: value for name, value in fields.items() if value}

    def args(self, **more: Any) -> ListTasksArgs:
        return ListTasksArgs.model_validate({**self.given(), **more})


@dataclass(frozen=True, slots=True)
class Column:
    status: str
    total: int
    tasks: list[Task]
    next_cursor: str | None


def board(
    db: Database, cursors: dict[str, str | None], narrowed: BoardFilter | None = None
) -> dict[str, Any]:
    """A column per status (a page of each, and how many tasks match), the dependency graph of the
    cards shown, next actions (of the whole board: they rank every open task)."""
    narrowed = narrowed or BoardFilter()
    with db.snapshot() as conn:
        whole = tasks.count_by_status(conn)
        totals = count_matching(db, narrowed.args()) if narrowed.given() else whole
        columns = []
        for status in STATUSES:
            args = narrowed.args(status=status, limit=PAGE, cursor=cursors.get(status))
            page = list_tasks(db, args)
            columns.append(Column(status, totals.get(status, 0), page.tasks, page.next_cursor))
        shown = [task for column in columns for task in column.tasks]
        graph: Graph = lay_out(shown)
        actions = next_actions(db, 5)
        leases_ended = tasks.leases_ended(conn, utc_now())
    # next_actions lists as stuck both the tasks whose status is blocked and the todo tasks
    # waiting on dependencies, with one total: the page names them apart, so that its count of
    # blocked tasks is the BLOCKED column's (unfiltered). Blocked tasks are open, so all are in it.
    blocked = [item for item in actions.blocked if item.status == "blocked"]
    waiting = [item for item in actions.blocked if item.status != "blocked"]
    return {
        "columns": columns,
        "graph": graph,
        "next": actions,
        "stuck": {
            "blocked": blocked,
            "blocked_total": whole.get("blocked", 0),
            "waiting": waiting,
            "waiting_total": actions.blocked_total - whole.get("blocked", 0),
        },
        "total": sum(totals.values()),
        "leases_ended": leases_ended,
        "filters": narrowed.given(),
    }


def only_audited(db: Database) -> bool:
    """Whether the store holds audited calls but no task: what / opens on is then the audit."""
    with db.snapshot() as conn:
        if conn.execute("SELECT 1 FROM tasks LIMIT 1").fetchone() is not None:
            return False
        return conn.execute("SELECT 1 FROM actions LIMIT 1").fetchone() is not None


def task_page(db: Database, task_id: str, after: str | None) -> dict[str, Any] | None:
    """The task's fields, its history and a page of the thought records that cite it, each marked
    when its session is broken (marks.py)."""
    with db.snapshot() as conn:
        if not tasks.task_exists(conn, task_id):
            return None
        detail = get_task_detail(db, task_id)
        after_seq = 0 if after is None else decode_cursor(after)
        records = trail.list_records(
            conn, session_id=None, task_id=task_id, kind=None, after_seq=after_seq, limit=PAGE + 1
        )
        more = len(records) > PAGE
        records = records[:PAGE]
        marks = record_marks(db, conn, records)
    return {
        "task": detail,
        "records": records,
        "marks": marks,
        "next_cursor": encode_cursor(records[-1].seq) if more else None,
    }
