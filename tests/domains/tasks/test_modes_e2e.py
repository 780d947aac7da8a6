"""The task tools across modes and over larger data: READONLY reads, paging 1,000 tasks over stdio."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.domains.tasks.helpers import create
from tests.helpers import call, chain_error, connect, ok_data

pytestmark = pytest.mark.anyio

OPEN_FILTER = {"status": ["todo", "in_progress"]}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.sqlite_only  # reads or alters the SQLite file itself
async def test_readonly_serves_reads_and_refuses_writes(server_env: dict[str, str]) -> None:
    db_path = Path(server_env["COLIBRI_DB_PATH"])
    async with connect(server_env) as client:
        ok_data(await call(client, "task_create", {"title": "first", "tags": ["x"]}))
        ok_data(await call(client, "task_create", {"title": "second", "depends_on": ["T-1"]}))
        ok_data(await call(client, "task_update", {"task_id": "T-1", "status": "in_progress"}))
        full_view = {
            "get": ok_data(await call(client, "task_get", {"task_id": "T-1"})),
            "list": ok_data(await call(client, "task_list", OPEN_FILTER)),
            "next": ok_data(await call(client, "task_next_actions", {"limit": 3})),
        }
    before = digest(db_path)
    async with connect({**server_env, "COLIBRI_MODE": "READONLY"}) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"task_get", "task_list", "task_next_actions"} <= names
        assert not {"task_create", "task_update"} & names
        assert ok_data(await call(client, "task_get", {"task_id": "T-1"})) == full_view["get"]
        assert ok_data(await call(client, "task_list", OPEN_FILTER)) == full_view["list"]
        assert ok_data(await call(client, "task_next_actions", {"limit": 3})) == full_view["next"]
        for tool, arguments in (
            ("task_create", {"title": "nope"}),
            ("task_update", {"task_id": "T-1", "status": "review"}),
        ):
            error = chain_error(await call(client, tool, arguments))
            assert error["code"] == "TOOL_NOT_ADMITTED"
            assert tool in error["message"] and "READONLY" in error["message"]
    assert digest(db_path) == before


@pytest.mark.sqlite_only  # reads or alters the SQLite file itself
async def test_paging_through_a_thousand_tasks_over_stdio(server_env: dict[str, str]) -> None:
    db = SQLiteDatabase.open(Path(server_env["COLIBRI_DB_PATH"]))
    try:
        migrate(db, MIGRATIONS)
        with db.atomic():
            for i in range(1000):
                create(db, f"bulk {i}", tags=["odd"] if i % 2 else [])
    finally:
        db.close()
    async with connect(server_env) as client:
        seen: list[str] = []
        cursor = None
        pages = 0
        while True:
            arguments = {"limit": 77} if cursor is None else {"limit": 77, "cursor": cursor}
            page = ok_data(await call(client, "task_list", arguments))
            seen.extend(task["id"] for task in page["tasks"])
            pages += 1
            cursor = page["next_cursor"]
            if cursor is None:
                break
        odd = ok_data(await call(client, "task_list", {"tag": "odd", "limit": 200}))
    assert seen == [f"T-{n}" for n in range(1, 1001)]
    assert pages == 13
    assert [task["id"] for task in odd["tasks"]] == [f"T-{n}" for n in range(2, 401, 2)]
