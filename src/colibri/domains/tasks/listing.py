"""task_list: filtered, keyset-paginated pages of tasks, oldest first."""

from __future__ import annotations

from typing import Any

from colibri.core.cursor import decode_cursor, encode_cursor
from colibri.core.database import Dialect
from colibri.domains.tasks import repository
from colibri.domains.tasks.arguments import ListTasksArgs
from colibri.domains.tasks.models import TaskPage
from colibri.storage import Database


def list_tasks(db: Database, args: ListTasksArgs) -> TaskPage:
    """One page of the tasks that match every filter given; `next_cursor` is None on the last page."""
    conditions, params = _filters(args, db.dialect)
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    # The number is the creation order and never changes, so pages neither repeat nor skip a task.
    sql = f"{repository.select_sql()}{where} ORDER BY number LIMIT ?"
    with db.snapshot() as conn:
        rows = conn.execute(sql, (*params, args.limit + 1)).fetchall()
        more = len(rows) > args.limit
        rows = rows[: args.limit]
        tasks = repository.tasks_from_rows(conn, rows)
    next_cursor = encode_cursor(rows[-1]["number"]) if more else None
    return TaskPage(tasks=tasks, next_cursor=next_cursor)


def count_matching(db: Database, args: ListTasksArgs) -> dict[str, int]:
    """How many tasks match the tag, assignee and text filters of `args`, per status (statuses
    without any are absent); `args`' own status, limit and cursor play no part."""
    conditions, params = _filters(args.model_copy(update={"status": None, "cursor": None}), db.dialect)
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    rows = db.execute(f"SELECT status, count(*) FROM tasks{where} GROUP BY status", params)
    return {str(row[0]): int(row[1]) for row in rows}


def _filters(args: ListTasksArgs, dialect: Dialect) -> tuple[list[str], list[Any]]:
    conditions: list[str] = []
    params: list[Any] = []
    statuses = args.statuses()
    if statuses:
        conditions.append(f"status IN ({','.join('?' * len(statuses))})")
        params.extend(statuses)
    if args.tag is not None:
        conditions.append(dialect.json_array_contains("tasks.tags"))
        params.append(args.tag)
    if args.assignee is not None:
        conditions.append("assignee = ?")
        params.append(args.assignee)
    if args.text is not None:
        pattern = f"%{_escape_like(args.text)}%"
        like = dialect.like
        conditions.append(f"(title {like} ? ESCAPE '\\' OR description {like} ? ESCAPE '\\')")
        params.extend((pattern, pattern))
    if args.cursor is not None:
        conditions.append("number > ?")
        params.append(decode_cursor(args.cursor))
    return conditions, params


def _escape_like(text: str) -> str:
    """Make `%`, `_` and the escape character itself match literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
