"""SQL for tasks, their dependencies and their history. Functions take a connection and never decide
rules; `service.py` does. Column names that appear in SQL text come from fixed tuples, never input.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from colibri.core.clock import utc_now
from colibri.domains.tasks.leases import Held, held
from colibri.domains.tasks.models import FieldChange, HistoryEntry, Task
from colibri.storage import Connection, Row

# The columns task_update may change; `depends_on` lives in its own table.
LEASE_COLUMNS = ("lease_holder", "lease_expires_at", "lease_s", "lease_token")
COLUMNS = ("title", "description", "status", "priority", "assignee", "tags", *LEASE_COLUMNS)
_SELECT = (
    "SELECT number, id, title, description, status, priority, assignee, tags, created_at, updated_at, "
    "version, lease_holder, lease_expires_at, lease_s, lease_token FROM tasks"
)
# SQLite's default limit on bound parameters is far above this; chunks keep IN lists short.
_CHUNK = 500


def task_id_for(number: int) -> str:
    return f"T-{number}"


def next_number(conn: Connection) -> int:
    """The number AUTOINCREMENT will give the next task (call inside the write transaction)."""
    row = conn.execute(conn.dialect.next_id("tasks", "number")).fetchone()
    return int(row[0])


def insert_task(conn: Connection, number: int, fields: Mapping[str, Any], now: str, lease: Held) -> None:
    conn.execute(
        "INSERT INTO tasks (number, id, title, description, status, priority, assignee, tags,"
        " created_at, updated_at, version, lease_holder, lease_expires_at, lease_s, lease_token)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)",
        (
            number,
            task_id_for(number),
            fields["title"],
            fields["description"],
            fields["status"],
            fields["priority"],
            fields["assignee"],
            json.dumps(fields["tags"], ensure_ascii=False),
            now,
            now,
            lease.holder,
            lease.expires_at,
            lease.seconds,
            lease.token,
        ),
    )


def update_task(
    conn: Connection, task_id: str, expected_version: int, fields: Mapping[str, Any], now: str
) -> bool:
    """Write `fields`, bump the version; only if the task is still at `expected_version`.

    The version test is part of the UPDATE itself, so no writer can slip in between a read
    and this write. False means the task was not at that version (nothing was written).
    """
    names = [name for name in COLUMNS if name in fields]
    values = [json.dumps(fields[n], ensure_ascii=False) if n == "tags" else fields[n] for n in names]
    assignments = "".join(f"{name} = ?, " for name in names)
    cursor = conn.execute(
        f"UPDATE tasks SET {assignments}updated_at = ?, version = version + 1 WHERE id = ? AND version = ?",
        (*values, now, task_id, expected_version),
    )
    return cursor.rowcount == 1


def current_version(conn: Connection, task_id: str) -> int | None:
    row = conn.execute("SELECT version FROM tasks WHERE id = ?", (task_id,)).fetchone()
    return None if row is None else int(row[0])


def set_dependencies(conn: Connection, task_id: str, depends_on: Sequence[str]) -> None:
    """Replace the task's whole depends_on list."""
    conn.execute("DELETE FROM task_dependencies WHERE task_id = ?", (task_id,))
    add_dependencies(conn, task_id, depends_on)


def add_dependencies(conn: Connection, task_id: str, depends_on: Sequence[str]) -> None:
    """Record depends_on for a task that has none yet, keeping the order given."""
    conn.executemany(
        "INSERT INTO task_dependencies (task_id, depends_on, position) VALUES (?, ?, ?)",
        [(task_id, dep, position) for position, dep in enumerate(depends_on)],
    )


def add_history(
    conn: Connection,
    task_id: str,
    *,
    version: int,
    event: str,
    changes: Mapping[str, FieldChange],
    now: str,
    principal: str,
) -> None:
    conn.execute(
        "INSERT INTO task_history (task_id, version, event, changed_at, changes, principal)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (task_id, version, event, now, json.dumps(changes, ensure_ascii=False), principal),
    )


def get_task(conn: Connection, task_id: str) -> Task | None:
    return get_tasks(conn, [task_id]).get(task_id)


def get_held(conn: Connection, task_id: str) -> tuple[Task, Held] | None:
    """The task and its lease columns as stored (the token outlives the lease), or None."""
    row = conn.execute(f"{_SELECT} WHERE id = ?", (task_id,)).fetchone()
    if row is None:
        return None
    (task,) = tasks_from_rows(conn, [row])
    return task, held(row)


def get_tasks(conn: Connection, task_ids: Sequence[str]) -> dict[str, Task]:
    """The tasks that exist among `task_ids`, by id, each with its dependencies."""
    rows = []
    for chunk in _chunks(task_ids):
        marks = ",".join("?" * len(chunk))
        rows.extend(conn.execute(f"{_SELECT} WHERE id IN ({marks})", chunk).fetchall())
    return {task.id: task for task in tasks_from_rows(conn, rows)}


def tasks_from_rows(conn: Connection, rows: Sequence[Row]) -> list[Task]:
    """Task objects for rows selected with `_SELECT`'s columns, in the rows' order."""
    dependencies = dependencies_of(conn, [row["id"] for row in rows])
    now = utc_now()
    return [_task(row, dependencies.get(row["id"], []), now) for row in rows]


def select_sql() -> str:
    """The SELECT that `tasks_from_rows` expects, for callers that add their own WHERE."""
    return _SELECT


def dependencies_of(conn: Connection, task_ids: Iterable[str]) -> dict[str, list[str]]:
    """Each task's depends_on, in the order it was given; tasks without any are absent."""
    result: dict[str, list[str]] = {}
    for chunk in _chunks(list(task_ids)):
        marks = ",".join("?" * len(chunk))
        for task_id, dep in conn.execute(
            f"SELECT task_id, depends_on FROM task_dependencies WHERE task_id IN ({marks})"
            " ORDER BY task_id, position",
            chunk,
        ):
            result.setdefault(task_id, []).append(dep)
    return result


def dependents_of(conn: Connection, task_id: str) -> list[str]:
    """Ids of the tasks that list `task_id` in their depends_on, oldest first."""
    rows = conn.execute(
        "SELECT t.id FROM task_dependencies d JOIN tasks t ON t.id = d.task_id"
        " WHERE d.depends_on = ? ORDER BY t.number",
        (task_id,),
    )
    return [row[0] for row in rows]


def dependents_in(conn: Connection, task_ids: Sequence[str]) -> dict[str, list[str]]:
    """For each of `task_ids`, the tasks that list it in their depends_on; tasks with none are absent."""
    result: dict[str, list[str]] = {}
    for chunk in _chunks(task_ids):
        marks = ",".join("?" * len(chunk))
        sql = (
            f"SELECT depends_on, task_id FROM task_dependencies WHERE depends_on IN ({marks})"
            " ORDER BY depends_on, task_id"
        )
        for dep, task_id in conn.execute(sql, chunk):
            result.setdefault(dep, []).append(task_id)
    return result


def statuses_of(conn: Connection, task_ids: Sequence[str]) -> dict[str, str]:
    """The status of each task that exists among `task_ids`."""
    result: dict[str, str] = {}
    for chunk in _chunks(task_ids):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT id, status FROM tasks WHERE id IN ({marks})"
        result.update((row[0], row[1]) for row in conn.execute(sql, chunk))
    return result


def titles_of(conn: Connection, task_ids: Sequence[str]) -> dict[str, str]:
    """The title of each task that exists among `task_ids` (no dependencies read, no Task built)."""
    result: dict[str, str] = {}
    for chunk in _chunks(task_ids):
        marks = ",".join("?" * len(chunk))
        result.update(conn.tuples(f"SELECT id, title FROM tasks WHERE id IN ({marks})", chunk))
    return result


def history(conn: Connection, task_id: str) -> list[HistoryEntry]:
    rows = conn.execute(
        "SELECT version, event, changed_at, changes, principal FROM task_history"
        " WHERE task_id = ? ORDER BY id",
        (task_id,),
    )
    return [
        HistoryEntry(
            version=row[0], event=row[1], changed_at=row[2], changes=json.loads(row[3]), principal=row[4]
        )
        for row in rows
    ]


def task_exists(conn: Connection, task_id: str) -> bool:
    """True when the task pipeline's table holds this id."""
    return conn.execute("SELECT 1 FROM tasks WHERE id = ?", (task_id,)).fetchone() is not None


def _task(row: Row, depends_on: list[str], now: str) -> Task:
    return Task(
        id=row["id"],
        title=row["title"],
        description=row["description"],
        status=row["status"],
        priority=row["priority"],
        depends_on=depends_on,
        tags=json.loads(row["tags"]),
        assignee=row["assignee"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        version=row["version"],
        lease=held(row).shown(row["status"], now),
    )


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def leases_ended(conn: Connection, now: str) -> int:
    """How many in_progress tasks hold a lease that has ended (SPEC §24: the board flags them)."""
    sql = "SELECT count(*) FROM tasks WHERE status = 'in_progress' AND lease_expires_at <= ?"
    return int(conn.execute(sql, (now,)).fetchone()[0])


def count_by_status(conn: Connection) -> dict[str, int]:
    """How many tasks each status holds (statuses without any are absent); reads the status index."""
    rows = conn.execute("SELECT status, count(*) FROM tasks GROUP BY status")
    return {row[0]: int(row[1]) for row in rows}
