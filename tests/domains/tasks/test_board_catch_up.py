"""A board kept by one replica catches up with another replica's changes by reading only the tasks
stamped since (SPEC §24, §25; changes.py), on both backends: after every kind of change, its answer
is the answer of a whole read, and it got there without reading the whole board again (a deletion
or a reopened task, which a patch cannot follow, are read whole)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from colibri.core.errors import DomainError
from colibri.domains.tasks import board as boards
from colibri.domains.tasks import claims, service
from colibri.domains.tasks.arguments import UpdateTaskArgs
from colibri.domains.tasks.models import PRIORITIES, NextActions
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


@dataclass
class Replicas:
    """A board kept by one connection, changed through another, checked against a whole read."""

    kept: Database
    other: Database
    reference: Database
    whole_reads: list[int]

    def check(self, change: str, *, whole: bool | None = False) -> None:
        """`whole`: whether the kept board should have been read whole (None: either)."""
        reads = len(self.whole_reads)
        seen, took = answers(self.kept), would_claim(self.kept)
        how = "a whole read" if whole else "a catch-up alone"
        assert whole is None or len(self.whole_reads) - reads == int(whole), f"{change}: expected {how}"
        self.reference.hints.clear()  # a reading of its own, made from the whole board
        assert seen == answers(self.reference), f"the kept board missed a change: {change}"
        assert answers(self.other) == seen, f"the writer's own kept board missed its change: {change}"
        assert took == would_claim(self.reference), f"the kept ranking missed a change: {change}"


@pytest.fixture
def replicas(fresh_db: Database, open_store: Callable[..., Database], whole_reads: list[int]) -> Replicas:
    return Replicas(fresh_db, open_store(), open_store(), whole_reads)


def test_a_kept_board_reflects_every_kind_of_change_by_another_replica(replicas: Replicas) -> None:
    other, check = replicas.other, replicas.check
    root = create(other, "root", priority="high").id
    middle = create(other, "middle", depends_on=[root]).id
    leaf = create(other, "leaf", depends_on=[middle]).id
    loose = [create(other, f"loose {n}", priority="low").id for n in range(4)]
    answers(replicas.kept)  # read whole once, then kept

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
    assert newest in {stuck.task_id for stuck in answers(replicas.kept)[0].blocked}
    update(other, loose[1], status="todo")
    check("a cancelled task reopened", whole=True)


def test_what_a_patch_cannot_follow_is_read_whole(replicas: Replicas) -> None:
    other, check = replicas.other, replicas.check
    first = create(other, "first").id
    waiter = create(other, "waiter").id
    late = create(other, "late").id  # the newest task, waited on by an older one
    answers(replicas.kept)
    update(other, waiter, depends_on=[late])
    update(other, late, status="cancelled")
    check("the newest task cancelled, an older one waiting on it")
    with other.atomic() as conn:
        conn.execute("DELETE FROM task_history WHERE task_id = ?", (first,))
        conn.execute("DELETE FROM tasks WHERE id = ?", (first,))
    check("a task deleted by hand", whole=True)
    update(other, late, status="todo")  # left out of the whole read, numbered above all it read
    check("the newest task reopened after a whole read that left it out", whole=True)
    gone = create(other, "cancelled at once").id
    update(other, gone, status="cancelled")
    update(other, waiter, depends_on=[late, gone])
    check("an older task made to wait on a new task cancelled before the board saw it open")
    update(other, gone, status="todo")
    check("that task reopened", whole=True)
    create(other, "after all that", depends_on=[gone])
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


@pytest.mark.parametrize("seed", [1, 2])
def test_random_changes_leave_the_kept_board_as_a_whole_read(replicas: Replicas, seed: int) -> None:
    """Random work by another replica (creations with dependencies, claims, moves along the state
    machine, cancellations and reopenings, new dependencies, priorities): after each change the
    kept board answers as a whole read does."""
    rng = random.Random(seed)
    other = replicas.other
    ids = [create(other, f"t{n}", priority=rng.choice(PRIORITIES)).id for n in range(8)]
    answers(replicas.kept)
    for step in range(40):
        task_id = rng.choice(ids)
        change = rng.choice(_CHANGES)
        try:
            if change == "create":
                deps = rng.sample(ids, k=min(len(ids), rng.randrange(3)))
                ids.append(create(other, f"t{len(ids)}", depends_on=deps).id)
            elif change == "claim":
                claims.claim(other, "bob", 60)
            elif change == "depends_on":
                _as_bob(other, task_id, depends_on=rng.sample(ids, k=2))
            elif change == "priority":
                _as_bob(other, task_id, priority=rng.choice(PRIORITIES))
            elif change == "done":
                write_back(other, task_id)
                _as_bob(other, task_id, status="done")
            else:
                _as_bob(other, task_id, status=change)
        except DomainError:
            continue  # a move the rules refuse: nothing changed
        replicas.check(f"step {step}: {change} {task_id}", whole=None)


_CHANGES = (
    *("create", "claim", "depends_on", "priority", "done"),
    *("in_progress", "review", "todo", "cancelled", "blocked"),
)


def _as_bob(db: Database, task_id: str, **fields: object) -> None:
    service.update_task(db, UpdateTaskArgs.model_validate({"task_id": task_id, **fields}), principal="bob")
