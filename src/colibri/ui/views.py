"""What each page shows, read through the domains' functions in one snapshot per page.

Every list is a keyset page (a task's number, a record's seq, a session's or an action's
position), so a page costs the same over ten tasks or ten thousand, a million records or ten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from colibri.core.cursor import decode_cursor, encode_cursor
from colibri.core.database import Database
from colibri.domains.log.note import Verifier
from colibri.domains.proofs import repository as proofs
from colibri.domains.tasks import repository as tasks
from colibri.domains.tasks.arguments import ListTasksArgs
from colibri.domains.tasks.listing import list_tasks
from colibri.domains.tasks.models import Task
from colibri.domains.tasks.next_actions import next_actions
from colibri.domains.tasks.service import get_task_detail
from colibri.domains.trail import repository as trail
from colibri.storage.audit_read import list_actions
from colibri.ui.checkpoints import recorded_verifier, session_checkpoints
from colibri.ui.graph import Graph, lay_out
from colibri.ui.integrity import CHECKS, INLINE_SPAN, check_now

STATUSES = ("todo", "in_progress", "blocked", "review", "done", "cancelled")
PAGE = 50


@dataclass(frozen=True, slots=True)
class Column:
    status: str
    total: int
    tasks: list[Task]
    next_cursor: str | None


def board(db: Database, cursors: dict[str, str | None]) -> dict[str, Any]:
    """A column per status (a page of each), the dependency graph of the cards shown, next actions."""
    with db.snapshot() as conn:
        totals = tasks.count_by_status(conn)
        columns = []
        for status in STATUSES:
            wanted = {"status": status, "limit": PAGE, "cursor": cursors.get(status)}
            args = ListTasksArgs.model_validate(wanted)
            page = list_tasks(db, args)
            columns.append(Column(status, totals.get(status, 0), page.tasks, page.next_cursor))
        shown = [task for column in columns for task in column.tasks]
        graph: Graph = lay_out(shown)
        actions = next_actions(db, 5)
    return {"columns": columns, "graph": graph, "next": actions, "total": sum(totals.values())}


def task_page(db: Database, task_id: str, after: str | None) -> dict[str, Any] | None:
    """The task's fields, its history and a page of the thought records that cite it."""
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
    return {
        "task": detail,
        "records": records,
        "next_cursor": encode_cursor(records[-1].seq) if more else None,
    }


def sessions_page(db: Database, before: int | None) -> dict[str, Any]:
    """A page of audit sessions, newest first, each with whether it is sealed."""
    with db.snapshot() as conn:
        rows = proofs.list_sessions(conn, before=before, limit=PAGE + 1)
    more = len(rows) > PAGE
    rows = rows[:PAGE]
    return {"sessions": [session for _, session in rows], "before": rows[-1][0] if more else None}


def session_page(
    db: Database, session_id: str, kind: str | None, after: str | None, verifier: Verifier | None = None
) -> dict[str, Any] | None:
    """The session, a page of its records, and the state of the chain over its records and of its seal.

    The chain is checked over the seq range the session spans (the records of other sessions
    inside it too, as they link it together; see `integrity`); the whole store is `colibri
    verify`'s work."""
    with db.snapshot() as conn:
        session = proofs.get_session(conn, session_id)
        if session is None:
            return None
        after_seq = 0 if after is None else decode_cursor(after)
        records = trail.list_records(
            conn, session_id=session_id, task_id=None, kind=kind, after_seq=after_seq, limit=PAGE + 1
        )
        span = trail.session_seq_range(conn, session_id)
        if span is None:
            integrity = None
        elif span[1] - span[0] < INLINE_SPAN:
            integrity = check_now(db, session, span)
        else:
            integrity = CHECKS.status(db.target, session, span)
        given = verifier is not None
        verifier = verifier or recorded_verifier(conn)
        checkpoints = session_checkpoints(conn, session_id, verifier)
    more = len(records) > PAGE
    records = records[:PAGE]
    return {
        "session": session,
        "records": records,
        "kind": kind,
        "span": span,
        "integrity": integrity,
        "checkpoints": checkpoints,
        "verifier_key": None if verifier is None else verifier.key(),
        "verifier_given": given,
        "next_cursor": encode_cursor(records[-1].seq) if more else None,
    }


def audit_page(db: Database, before: int | None, filters: dict[str, str | None]) -> dict[str, Any]:
    """A page of audited calls, newest first, with the filters given."""
    with db.snapshot() as conn:
        rows = list_actions(conn, before=before, limit=PAGE + 1, **filters)
    more = len(rows) > PAGE
    rows = rows[:PAGE]
    return {"actions": rows, "before": rows[-1].sequence_no if more else None, "filters": filters}
