"""Helpers for the task unit tests: build tasks and states quickly, and write back to the decision
trail with direct SQL (end-to-end tests use the real audit_session_start and thought_record)."""

from __future__ import annotations

import secrets
import sqlite3
import uuid
from typing import Any

from colibri.core.clock import utc_now
from colibri.core.errors import DomainError
from colibri.domains.tasks import repository, service
from colibri.domains.tasks.arguments import CreateTaskArgs, UpdateTaskArgs
from colibri.domains.tasks.models import Task
from colibri.storage import Database

# The shortest legal way from a new task (todo) to each status.
PATHS: dict[str, tuple[str, ...]] = {
    "todo": (),
    "in_progress": ("in_progress",),
    "blocked": ("blocked",),
    "review": ("in_progress", "review"),
    "done": ("in_progress", "review", "done"),
    "cancelled": ("cancelled",),
}


def create(db: Database, title: str = "a task", **fields: Any) -> Task:
    return service.create_task(db, CreateTaskArgs(title=title, **fields))


def update(db: Database, task_id: str, **fields: Any) -> Task:
    return service.update_task(db, UpdateTaskArgs(task_id=task_id, **fields))


def refusal(db: Database, task_id: str, **fields: Any) -> DomainError:
    """The DomainError that this update raises (fails the test if it succeeds)."""
    try:
        task = update(db, task_id, **fields)
    except DomainError as exc:
        return exc
    raise AssertionError(f"update {fields} of {task_id} succeeded: {task}")


def write_back(conn: sqlite3.Connection, task_id: str, kind: str = "writeback") -> None:
    """One thought record citing `task_id`, in a session of its own. Only the columns the writeback
    rule reads are meaningful; the hash is random (these rows are not part of a verified chain)."""
    session_id = f"test-{uuid.uuid4()}"
    now = utc_now()
    conn.execute("INSERT INTO audit_sessions (session_id, started_at) VALUES (?, ?)", (session_id, now))
    seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM thought_records").fetchone()[0]
    conn.execute(
        "INSERT INTO thought_records (seq, session_id, kind, content, task_id, created_at, prev_hash, hash)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (seq, session_id, kind, f"did {task_id}", task_id, now, "0" * 64, secrets.token_hex(32)),
    )


def bring_to(db: Database, task_id: str, status: str) -> Task:
    """Move a fresh todo task along the legal path to `status` (writing back before done)."""
    result = repository.get_task(db, task_id)
    assert result is not None, f"no task {task_id}"
    for step in PATHS[status]:
        if step == "done":
            write_back(db, task_id)
        result = update(db, task_id, status=step)
    return result
