"""Dependencies must exist and never form a cycle: checked on create and on every change."""

from __future__ import annotations

import pytest

from colibri.core.errors import DomainError
from colibri.domains.tasks import service
from colibri.storage import Database
from tests.domains.tasks.helpers import bring_to, create, refusal, update


def test_unknown_dependencies_are_not_found_and_listed(fresh_db: Database) -> None:
    known = create(fresh_db).id
    with pytest.raises(DomainError) as caught:
        create(fresh_db, depends_on=["T-7", known, "T-9"])
    assert caught.value.code == "ERR_NOT_FOUND"
    assert caught.value.details["missing"] == ["T-7", "T-9"]
    assert "T-7, T-9" in caught.value.message and "task_list" in caught.value.message
    error = refusal(fresh_db, known, depends_on=["T-8"])
    assert (error.code, error.details["missing"]) == ("ERR_NOT_FOUND", ["T-8"])


def test_a_task_cannot_depend_on_itself(fresh_db: Database) -> None:
    task = create(fresh_db).id
    error = refusal(fresh_db, task, depends_on=[task])
    assert error.code == "ERR_DEPENDENCY_CYCLE"
    assert error.details["cycle"] == [task, task]
    assert f"{task} → {task}" in error.message


def test_a_new_task_naming_its_own_future_id_is_a_cycle(fresh_db: Database) -> None:
    create(fresh_db)
    with pytest.raises(DomainError) as caught:
        create(fresh_db, depends_on=["T-2"])
    assert caught.value.code == "ERR_DEPENDENCY_CYCLE"
    assert caught.value.details["cycle"] == ["T-2", "T-2"]


def test_direct_cycle(fresh_db: Database) -> None:
    first = create(fresh_db).id
    second = create(fresh_db, depends_on=[first]).id
    error = refusal(fresh_db, first, depends_on=[second])
    assert error.code == "ERR_DEPENDENCY_CYCLE"
    assert error.details["cycle"] == [first, second, first]
    assert f"{first} → {second} → {first}" in error.message
    assert service.get_task_detail(fresh_db, first).depends_on == []


def test_fifty_task_cycle_is_named_in_full(fresh_db: Database) -> None:
    chain = [create(fresh_db, "link 1").id]
    for i in range(2, 51):
        chain.append(create(fresh_db, f"link {i}", depends_on=[chain[-1]]).id)
    # chain[k] depends on chain[k-1]; making the first depend on the last closes a 50-cycle.
    error = refusal(fresh_db, chain[0], depends_on=[chain[-1]])
    assert error.code == "ERR_DEPENDENCY_CYCLE"
    expected = [chain[0], *reversed(chain[1:]), chain[0]]
    assert error.details["cycle"] == expected
    assert len(expected) == 51
    assert " → ".join(expected) in error.message


def test_cycle_through_an_added_dependency_among_several(fresh_db: Database) -> None:
    a = create(fresh_db).id
    b = create(fresh_db, depends_on=[a]).id
    c = create(fresh_db, depends_on=[b]).id
    d = create(fresh_db).id
    error = refusal(fresh_db, a, depends_on=[d, c])
    assert error.details["cycle"] == [a, c, b, a]


def test_the_shortest_cycle_is_reported(fresh_db: Database) -> None:
    a = create(fresh_db).id
    b = create(fresh_db, depends_on=[a]).id
    c = create(fresh_db, depends_on=[b]).id
    d = create(fresh_db, depends_on=[a, c]).id
    assert refusal(fresh_db, a, depends_on=[d]).details["cycle"] == [a, d, a]


def test_diamonds_and_shared_dependencies_are_not_cycles(fresh_db: Database) -> None:
    root = create(fresh_db).id
    left = create(fresh_db, depends_on=[root]).id
    right = create(fresh_db, depends_on=[root]).id
    top = create(fresh_db, depends_on=[left, right, root]).id
    assert update(fresh_db, top, depends_on=[right, left]).depends_on == [right, left]
    unrelated = create(fresh_db).id
    assert update(fresh_db, root, depends_on=[unrelated]).depends_on == [unrelated]


def test_replacing_dependencies_drops_the_old_ones(fresh_db: Database) -> None:
    a, b, c = (create(fresh_db, name).id for name in "abc")
    task = create(fresh_db, depends_on=[a, b]).id
    assert update(fresh_db, task, depends_on=[c]).depends_on == [c]
    assert service.get_task_detail(fresh_db, a).blocks == []
    history = service.get_task_detail(fresh_db, task).history
    assert history[-1].changes == {"depends_on": {"from": [a, b], "to": [c]}}
    # Once a no longer leads to task, a may depend on task.
    assert update(fresh_db, a, depends_on=[task]).depends_on == [task]


@pytest.mark.parametrize("status", ["in_progress", "review", "done"])
def test_work_under_way_cannot_take_an_open_dependency(fresh_db: Database, status: str) -> None:
    """Otherwise the in_progress rule could be sidestepped: start first, add the dependency after."""
    task = create(fresh_db).id
    bring_to(fresh_db, task, status)
    blocker = create(fresh_db, "not started").id
    error = refusal(fresh_db, task, depends_on=[blocker])
    assert error.code == "ERR_DEPENDENCIES_OPEN"
    assert error.details["open_dependencies"] == [{"id": blocker, "status": "todo"}]
    assert f"cannot be {status}" in error.message and "remove them from depends_on" in error.message
    assert service.get_task_detail(fresh_db, task).depends_on == []
    finished = create(fresh_db, "finished").id
    bring_to(fresh_db, finished, "done")
    assert update(fresh_db, task, depends_on=[finished]).depends_on == [finished]


@pytest.mark.parametrize("status", ["todo", "blocked", "cancelled"])
def test_work_not_under_way_may_take_any_dependency(fresh_db: Database, status: str) -> None:
    task = create(fresh_db).id
    bring_to(fresh_db, task, status)
    blocker = create(fresh_db, "not started").id
    assert update(fresh_db, task, depends_on=[blocker]).depends_on == [blocker]
