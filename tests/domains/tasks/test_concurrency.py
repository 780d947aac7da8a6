"""Optimistic concurrency: expected_version is checked by the UPDATE itself, so two writers, even
two server processes on one database file, never overwrite each other silently."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from mcp import Client

from colibri.core.clock import utc_now
from colibri.domains.tasks import repository, service
from colibri.storage import Database
from tests.domains.tasks.helpers import create
from tests.helpers import call, connect, domain_error, ok_data


def test_the_update_statement_refuses_a_version_that_moved_after_the_read(
    fresh_db: Database, open_store: Callable[..., Database]
) -> None:
    task = create(fresh_db)
    other = open_store()
    try:
        seen = repository.get_task(fresh_db, task.id)
        assert seen is not None and seen.version == 1
        # Another connection writes between our read and our write.
        with other.atomic() as conn:
            assert repository.update_task(conn, task.id, 1, {"title": "theirs"}, utc_now())
        with fresh_db.atomic() as conn:
            assert not repository.update_task(conn, task.id, seen.version, {"title": "ours"}, utc_now())
    finally:
        other.close()
    stored = service.get_task_detail(fresh_db, task.id)
    assert (stored.title, stored.version) == ("theirs", 2)


async def _race(clients: list[Client], task_id: str, version: int) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = [{} for _ in clients]

    async def one(i: int) -> None:
        arguments = {"task_id": task_id, "title": f"writer {i} at v{version}", "expected_version": version}
        results[i] = await call(clients[i], "task_update", arguments)

    async with anyio.create_task_group() as group:
        for i in range(len(clients)):
            group.start_soon(one, i)
    return results


@pytest.mark.anyio
async def test_two_servers_race_the_same_expected_version(server_env: dict[str, str]) -> None:
    rounds = 12
    async with connect(server_env) as first, connect(server_env) as second:
        clients = [first, second]
        task = ok_data(await call(first, "task_create", {"title": "contended"}))
        winners: list[str] = []
        for version in range(1, rounds + 1):
            results = await _race(clients, task["id"], version)
            succeeded = [r for r in results if r["data"].get("ok") is not False]
            refused = [domain_error(r) for r in results if r["data"].get("ok") is False]
            assert len(succeeded) == 1 and len(refused) == 1, results
            assert ok_data(succeeded[0])["version"] == version + 1
            assert refused[0]["code"] == "ERR_CONFLICT"
            assert (refused[0]["expected_version"], refused[0]["current_version"]) == (version, version + 1)
            winners.append(ok_data(succeeded[0])["title"])
        detail = ok_data(await call(second, "task_get", {"task_id": task["id"]}))
    # Every accepted write is in the history, in order: nothing was lost or overwritten.
    assert detail["version"] == rounds + 1
    assert [entry["changes"]["title"]["to"] for entry in detail["history"][1:]] == winners
    assert detail["title"] == winners[-1]


@pytest.mark.anyio
async def test_two_servers_without_expected_version_both_land_in_history(server_env: dict[str, str]) -> None:
    async with connect(server_env) as first, connect(server_env) as second:
        task = ok_data(await call(first, "task_create", {"title": "shared"}))

        async def write(client: Client, tag: str) -> None:
            ok_data(await call(client, "task_update", {"task_id": task["id"], "tags": [tag]}))

        async with anyio.create_task_group() as group:
            group.start_soon(write, first, "first")
            group.start_soon(write, second, "second")
        detail = ok_data(await call(first, "task_get", {"task_id": task["id"]}))
    assert detail["version"] == 3
    assert sorted(entry["changes"]["tags"]["to"][0] for entry in detail["history"][1:]) == ["first", "second"]
