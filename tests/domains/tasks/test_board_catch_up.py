"""A board kept by one replica catches up with another replica's changes by reading only the tasks
stamped since (SPEC §24, §25; changes.py), on both backends: after every kind of change, its answer
is the answer of a whole read, and it got there without reading the whole board again (a deletion
or a reopened task, which a patch cannot follow, are read whole)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from colibri.domains.tasks import board as boards
from colibri.domains.tasks import claims
from colibri.domains.tasks.models import NextActions
from colibri.domains.tasks.next_actions import next_actions
from colibri.storage import Database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import migrations_for
from tests.domains.tasks.helpers import bring_to, create, update, write_back
from tests.helpers.stores import store_before

PAST = "2020-01-01T00:00:00.000000Z"  # a lease that ended long ago reads the same at every call


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the whole reads of the board (the real read runs; this only counts it)."""
    count: list[int] = []
    read = boards.read

    def counted(*args: object, **kwargs: object) -> boards.Board:
        count.append(1)
        return read(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(boards, "read", counted)
    return count


def answers(db: Database) -> list[NextActions]:
    return [next_actions(db, 50, principal) for principal in ("ana", "bob")]


class _Undone(Exception):
    pass


def would_claim(db: Database) -> str | None:
    """What a claim would take now (it walks the kept ranking), the claim then rolled back."""
    try:
        with db.atomic():
            taken = claims.claim(db, "carla", None).actions
            raise _Undone
    except _Undone:
        pass
    return taken[0].task.id if taken else None


def test_a_kept_board_reflects_every_kind_of_change_by_another_replica(
    fresh_db: Database, open_store: Callable[..., Database], whole_reads: list[int]
) -> None:
    kept, other, reference = fresh_db, open_store(), open_store()

    def check(change: str, *, whole: bool = False) -> None:
        reads = len(whole_reads)
        seen, took = answers(kept), would_claim(kept)
        how = "a whole read" if whole else "a catch-up alone"
        assert len(whole_reads) - reads == int(whole), f"{change}: expected {how}"
        reference.hints.clear()  # a reading of its own, made from the whole board
        assert seen == answers(reference), f"the kept board missed a change: {change}"
        assert answers(other) == seen, f"the writer's own kept board missed its change: {change}"
        assert took == would_claim(reference), f"the kept ranking missed a change: {change}"

    root = create(other, "root", priority="high").id
    middle = create(other, "middle", depends_on=[root]).id
    leaf = create(other, "leaf", depends_on=[middle]).id
    loose = [create(other, f"loose {n}", priority="low").id for n in range(4)]
    answers(kept)  # read whole once, then kept

    claims.claim(other, "bob", 60)
    check("a claim: a status and a lease")
    update(other, loose[3], priority="critical")
    check("a priority")
    newest = create(other, "newest", depends_on=[leaf, loose[1]]).id
    check("a new task waiting on a chain (every task below it unblocks one more)")
    update(other, loose[2], depends_on=[loose[3]])
    check("a dependency added to an existing task")
    other.execute("UPDATE tasks SET lease_expires_at = ? WHERE id = ?", (PAST, root))
    check("a lease that ended (by hand): offered as take_over")
    bring_to(other, loose[3], "review")
    write_back(other, loose[3])
    update(other, loose[3], status="done")
    check("a task done: what waited on it alone is ready")
    update(other, loose[1], status="cancelled")
    check("a task cancelled: what waits on it says so")
    assert newest in {stuck.task_id for stuck in answers(kept)[0].blocked}
    update(other, loose[1], status="todo")
    check("a cancelled task reopened", whole=True)
    with other.atomic() as conn:
        for sql in (
            "DELETE FROM task_history WHERE task_id = ?",
            "DELETE FROM task_dependencies WHERE task_id = ?",
        ):
            conn.execute(sql, (newest,))
        conn.execute("DELETE FROM tasks WHERE id = ?", (newest,))
    check("a task deleted by hand", whole=True)
    create(other, "after all that", depends_on=[loose[1]])
    check("a new task after a whole read")


def test_a_claim_catches_up_on_the_other_replica_s_claims(
    fresh_db: Database, open_store: Callable[..., Database], whole_reads: list[int]
) -> None:
    """Replicas taking turns: each claim finds the board moved by the other and reads only that."""
    other = open_store()
    ids = {create(fresh_db, f"t{n}", priority="high" if n % 3 else "low").id for n in range(8)}
    taken = []
    for n in range(8):
        db, who = (fresh_db, "ana") if n % 2 else (other, "bob")
        (action,) = claims.claim(db, who, None).actions
        taken.append(action.task.id)
    assert sorted(taken) == sorted(ids) and len(set(taken)) == len(taken)
    assert len(whole_reads) == 2, "one whole read per replica, then catch-ups"


def test_migration_0036_keeps_the_board_and_stamps_what_changes_after(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, whole_reads: list[int]
) -> None:
    """A store from before the stamps: its tasks stay as they were, the version goes on from where
    it was, and a change made after the migration is caught up with."""
    db = store_before("0036_task_stamps", backend, tmp_path, request)
    try:
        first = create(db, "before", priority="low").id
        create(db, "waits", depends_on=[first])
        before = boards.version_of(db)
        migrate(db, migrations_for(db.dialect.name))
        assert boards.version_of(db) == before
        answer = next_actions(db, 10, "ana")
        assert [a.task.id for a in answer.actions] == [first] and answer.blocked_total == 1
        with db.atomic() as conn:  # another replica's change, as SQL on the same store
            conn.execute("UPDATE tasks SET priority = 'critical' WHERE id = ?", (first,))
        reads = len(whole_reads)
        (action,) = next_actions(db, 10, "ana").actions
        assert "critical priority" in action.reason and len(whole_reads) == reads
    finally:
        db.close()
