"""The audit store's writer (audit/writer.py) on a real SQLite file: a write done at once on the event
loop, one that must wait done in the writer's thread, writes that arrive together committed in one
transaction (group commit), one that fails failing alone, and the close that commits what waits."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from colibri.checkpointing import StoreClosed
from colibri.core.database import Connection
from colibri.storage import open_database
from colibri.storage.audit_log import open_running
from colibri.storage.errors import IntegrityError
from colibri.storage.migrations import migrate
from colibri.switchboard.audit.writer import Now, Writer
from colibri.tools.catalog import migrations_for

pytestmark = pytest.mark.anyio


class CountingWriter(Writer):
    """The writer, noting how many writes each of its transactions carried."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.batches: list[int] = []

    def _commit(self, jobs: list[Any]) -> list[object]:
        self.batches.append(len(jobs))
        return super()._commit(jobs)


def opening(name: str) -> Any:
    return lambda conn: int(open_running(conn, name, "git.commit", "{}", "ci", "then").fetchone()[0])


def rows(store: Path) -> list[str]:
    with sqlite3.connect(store) as conn:
        found = [row[0] for row in conn.execute("SELECT correlation_id FROM actions ORDER BY sequence_no")]
    conn.close()
    return found


@contextmanager
def lock_held(store: Path) -> Iterator[threading.Event]:
    """Another connection holding the write lock until the event is set."""
    release, held = threading.Event(), threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(store, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        release.wait(20)
        conn.execute("ROLLBACK")
        conn.close()

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        yield release
    finally:
        release.set()
        holder.join(20)


@asynccontextmanager
async def serving(tmp_path: Path) -> AsyncIterator[tuple[CountingWriter, Path]]:
    store = tmp_path / "audit.db"
    db = open_database(store)
    migrate(db, migrations_for("sqlite"))
    writer = CountingWriter(db)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(writer.serve)
        yield writer, store
        tasks.cancel_scope.cancel()
    await writer.close()


async def test_a_write_the_store_takes_at_once_is_done_on_the_spot(tmp_path: Path) -> None:
    async with serving(tmp_path) as (writer, store):
        written = writer.write(opening("c1"))
        assert isinstance(written, Now) and written.value == 1
        assert rows(store) == ["c1"] and writer.batches == []


async def test_writes_that_wait_go_to_the_thread_and_commit_together(tmp_path: Path) -> None:
    async with serving(tmp_path) as (writer, store):
        with lock_held(store) as release:
            waiting = [writer.write(opening(f"c{n}")) for n in range(3)]
            assert not any(isinstance(written, Now) for written in waiting)
            await anyio.sleep(0.05)
            assert rows(store) == []
            release.set()
            numbers = [await written for written in waiting]  # type: ignore[misc]
    assert numbers == [1, 2, 3] and rows(store) == ["c0", "c1", "c2"]
    assert writer.batches == [3]


async def test_a_write_that_fails_fails_alone(tmp_path: Path) -> None:
    def refused(conn: Connection) -> None:
        conn.execute("INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at) "
                     "VALUES ('bad', 't', '{}', 'not an outcome', 'then')")  # fmt: skip

    async with serving(tmp_path) as (writer, store):
        with lock_held(store) as release:
            first, bad, last = writer.write(opening("c1")), writer.write(refused), writer.write(opening("c3"))
            release.set()
            assert await first == 1  # type: ignore[misc]
            with pytest.raises(IntegrityError):
                await bad  # type: ignore[misc]
            assert await last == 2  # type: ignore[misc]
    assert rows(store) == ["c1", "c3"]


async def test_close_commits_what_waits_runs_the_last_work_and_refuses_after(tmp_path: Path) -> None:
    store = tmp_path / "audit.db"
    db = open_database(store)
    migrate(db, migrations_for("sqlite"))
    writer = Writer(db)
    lasts: list[int] = []
    with lock_held(store) as release:
        waiting = writer.write(opening("c1"))  # nobody serves: it waits for the close
        release.set()
    await writer.close(lambda db: lasts.append(len(rows(store))))
    assert await waiting == 1  # type: ignore[misc]
    assert lasts == [1] and rows(store) == ["c1"]
    with pytest.raises(StoreClosed):
        writer.write(opening("c2"))
