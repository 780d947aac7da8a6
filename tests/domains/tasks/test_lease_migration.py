"""Migration 0034 gives tasks their lease columns (SPEC §24) on an existing store of either backend:
every task stays as it was and nobody holds one; an in_progress task from before is anyone's to
continue until its first write, which leases it to the writer."""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri.core.errors import DomainError
from colibri.domains.tasks import claims, service
from colibri.domains.tasks.arguments import UpdateTaskArgs
from colibri.domains.tasks.next_actions import next_actions
from colibri.storage.migrations import migrate
from colibri.tools.catalog import migrations_for
from tests.helpers.stores import store_before

NAME = "0034_task_leases"


def test_tasks_from_before_leases_are_held_by_nobody_until_written(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = store_before(NAME, backend, tmp_path, request)
    try:
        with db.atomic() as conn:
            then = "2026-01-01T00:00:00.000000Z"
            conn.executemany(
                "INSERT INTO tasks (number, id, title, status, priority, created_at, updated_at, version)"
                " VALUES (?, ?, ?, ?, 'medium', ?, ?, 3)",
                [
                    (1, "T-1", "under way", "in_progress", then, then),
                    (2, "T-2", "waiting", "todo", then, then),
                ],
            )
        assert NAME in migrate(db, migrations_for(db.dialect.name))

        old = service.get_task_detail(db, "T-1")
        assert (old.status, old.version, old.lease) == ("in_progress", 3, None)
        assert [(a.task.id, a.action) for a in next_actions(db, 5, "bob").actions] == [
            ("T-1", "continue"),
            ("T-2", "start"),
        ]
        (claimed,) = claims.claim(db, "bob", None).actions
        assert claimed.task.id == "T-2", "a task nobody holds is not claimed from under whoever works on it"
        written = service.update_task(db, UpdateTaskArgs(task_id="T-1", title="still"), principal="carla")
        assert written.lease is not None and (written.lease.holder, written.lease.token) == ("carla", 4)
        with pytest.raises(DomainError) as refused:
            service.update_task(db, UpdateTaskArgs(task_id="T-1", title="mine"), principal="dave")
        assert refused.value.code == "ERR_LEASED"
    finally:
        db.close()
