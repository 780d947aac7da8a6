"""task_next_actions with leases and claims (SPEC §24), on both backends: what each caller is offered,
what claim=true takes, why nothing is claimed, and claims from two connections (two replicas)."""

from __future__ import annotations

import time
from collections.abc import Callable

from colibri.core.clock import utc_now
from colibri.domains.tasks import claims, leases, service
from colibri.domains.tasks.arguments import UpdateTaskArgs
from colibri.domains.tasks.next_actions import next_actions
from colibri.storage import Database
from tests.domains.tasks.helpers import create


def offered(db: Database, principal: str) -> list[tuple[str, str]]:
    return [(a.task.id, a.action) for a in next_actions(db, 10, principal).actions]


def end_lease(db: Database, task_id: str) -> None:
    with db.atomic() as conn:
        past = "2020-01-01T00:00:00.000000Z"
        conn.execute("UPDATE tasks SET lease_expires_at = ? WHERE id = ?", (past, task_id))


def test_a_claim_takes_the_best_start_and_the_next_claim_the_next(fresh_db: Database) -> None:
    low = create(fresh_db, "low", priority="low").id
    high = create(fresh_db, "high", priority="high").id
    first = claims.claim(fresh_db, "ana", 60)
    assert first.reason is None and len(first.actions) == 1
    (taken,) = first.actions
    assert (taken.task.id, taken.action, taken.task.status) == (high, "start", "in_progress")
    assert taken.task.lease is not None
    assert (taken.task.lease.holder, taken.task.lease.token, taken.task.lease.lease_s) == ("ana", 2, 60)
    assert service.get_task_detail(fresh_db, high).lease == taken.task.lease
    assert offered(fresh_db, "ana") == [(high, "continue"), (low, "start")]
    assert offered(fresh_db, "bob") == [(low, "start")], (
        "a task others hold under a running lease is not offered"
    )
    (second,) = claims.claim(fresh_db, "bob", None).actions
    assert (second.task.id, second.task.lease.holder, second.task.lease.lease_s) == (low, "bob", 900)  # type: ignore[union-attr]


def test_nothing_to_claim_is_an_empty_list_and_the_reason(fresh_db: Database) -> None:
    assert (
        claims.claim(fresh_db, "ana", None).reason
        == "nothing ready: no open tasks; create some with task_create"
    )
    root = create(fresh_db, "root").id
    for n in range(3):
        create(fresh_db, f"waits {n}", depends_on=[root])
    claims.claim(fresh_db, "ana", None)
    answer = claims.claim(fresh_db, "bob", None)
    assert answer.actions == []
    assert answer.reason is not None
    assert answer.reason.startswith("nothing ready: 3 tasks wait on dependencies, 1 task leased by others")
    assert answer.blocked_total == 3
    mine = claims.claim(fresh_db, "ana", None).reason
    assert mine == (
        "nothing ready: 3 tasks wait on dependencies, 1 task in progress for you "
        "(task_next_actions shows them)"
    )


def test_an_ended_lease_is_offered_as_take_over_and_claimed(fresh_db: Database) -> None:
    task_id = create(fresh_db, "abandoned", priority="critical").id
    create(fresh_db, "fresh", priority="low")
    claims.claim(fresh_db, "ana", 10)
    end_lease(fresh_db, task_id)
    (offer, start) = next_actions(fresh_db, 10, "bob").actions
    assert (offer.task.id, offer.action) == (task_id, "take_over")
    assert offer.reason.startswith("ana's lease ended ") and "take_over=true" in offer.reason
    assert start.action == "start"
    assert offered(fresh_db, "ana")[0] == (task_id, "continue"), "the holder itself may just go on"
    (taken,) = claims.claim(fresh_db, "bob", 30).actions
    assert (taken.task.id, taken.action, taken.task.lease.holder) == (task_id, "take_over", "bob")  # type: ignore[union-attr]
    history = service.get_task_detail(fresh_db, task_id).history
    assert [entry.principal for entry in history[1:]] == ["ana", "bob"]
    assert history[-1].changes["lease_holder"] == {"from": "ana", "to": "bob"}


def test_claims_from_two_connections_never_take_the_same_task(
    fresh_db: Database, open_store: Callable[..., Database]
) -> None:
    """Each connection keeps its own reading of the board; a claim made through the other one moves
    the board's version, so the kept reading is not used."""
    other = open_store()
    ids = [create(fresh_db, f"t{n}").id for n in range(6)]
    taken = []
    for n in range(6):
        db, who = (fresh_db, "ana") if n % 2 else (other, "bob")
        next_actions(db, 5, who)  # each keeps a reading between claims
        (action,) = claims.claim(db, who, None).actions
        taken.append(action.task.id)
    assert sorted(taken) == sorted(ids)
    assert claims.claim(fresh_db, "carla", None).actions == []
    # A claim that is rolled back leaves no trace in the kept reading.
    create(fresh_db, "last")
    try:
        with fresh_db.atomic():
            (action,) = claims.claim(fresh_db, "ana", None).actions
            raise RuntimeError("rolled back")
    except RuntimeError:
        pass
    (again,) = claims.claim(fresh_db, "bob", None).actions
    assert again.task.id == action.task.id and again.task.lease.holder == "bob"  # type: ignore[union-attr]


def test_a_holder_s_write_renews_and_is_seen_by_the_next_claim(fresh_db: Database) -> None:
    task_id = create(fresh_db, "one").id
    (taken,) = claims.claim(fresh_db, "ana", 10).actions
    assert taken.task.lease is not None
    args = UpdateTaskArgs(task_id=task_id, title="renamed", lease_token=taken.task.lease.token)
    renamed = service.update_task(fresh_db, args, principal="ana")
    assert renamed.lease is not None and renamed.lease.expires_at >= taken.task.lease.expires_at
    assert claims.claim(fresh_db, "bob", None).actions == []


def test_a_kept_answer_lasts_until_the_first_running_lease_ends(fresh_db: Database) -> None:
    """The board does not change when a lease ends, only the clock: an answer kept for the board's
    version is given again only until then."""
    task_id = create(fresh_db, "soon free").id
    claims.claim(fresh_db, "ana", None)
    soon = leases.expiry(utc_now(), 1)
    with fresh_db.atomic() as conn:
        conn.execute("UPDATE tasks SET lease_expires_at = ? WHERE id = ?", (soon, task_id))
    first = next_actions(fresh_db, 5, "bob")
    assert first.actions == [] and next_actions(fresh_db, 5, "bob") is first, "kept while the lease runs"
    deadline = time.monotonic() + 10
    while not (answer := next_actions(fresh_db, 5, "bob")).actions:
        assert time.monotonic() < deadline, "the lease ended, the kept answer still said nothing to do"
        time.sleep(0.02)
    assert utc_now() >= soon and [(a.task.id, a.action) for a in answer.actions] == [(task_id, "take_over")]
