"""task_next_actions on hand-built graphs whose right answer is known."""

from __future__ import annotations

from colibri.domains.tasks import repository
from colibri.domains.tasks.next_actions import next_actions
from colibri.domains.tasks.stuck import BLOCKED_SHOWN
from colibri.storage import Database
from tests.domains.tasks.helpers import bring_to, create, update


def plan(db: Database, limit: int = 50) -> list[tuple[str, str, int]]:
    return [(a.task.id, a.action, a.unblocks) for a in next_actions(db, limit).actions]


def test_empty_backlog(fresh_db: Database) -> None:
    result = next_actions(fresh_db, 5)
    assert (result.actions, result.blocked, result.blocked_total) == ([], [], 0)


def test_continue_then_review_then_start_whatever_the_priority(fresh_db: Database) -> None:
    start = create(fresh_db, "ready", priority="critical").id
    review = bring_to(fresh_db, create(fresh_db, "in review", priority="high").id, "review").id
    going = bring_to(fresh_db, create(fresh_db, "under way", priority="low").id, "in_progress").id
    bring_to(fresh_db, create(fresh_db, "finished", priority="critical").id, "done")
    bring_to(fresh_db, create(fresh_db, "dropped", priority="critical").id, "cancelled")
    bring_to(fresh_db, create(fresh_db, "stuck", priority="critical").id, "blocked")
    assert plan(fresh_db) == [(going, "continue", 0), (review, "review", 0), (start, "start", 0)]
    assert plan(fresh_db, limit=2) == [(going, "continue", 0), (review, "review", 0)]


def test_start_ranks_priority_then_transitive_unblocks_then_age(fresh_db: Database) -> None:
    done_dep = bring_to(fresh_db, create(fresh_db, "done dependency").id, "done").id
    g = create(fresh_db, "G", priority="high").id  # unblocks nothing open
    b = create(fresh_db, "B", priority="high").id  # unblocks F
    c = create(fresh_db, "C", priority="high").id  # unblocks D, E (E also directly): 2, not 3
    a = create(fresh_db, "A", priority="medium").id  # unblocks 4 but lower priority
    d = create(fresh_db, "D", depends_on=[c]).id
    create(fresh_db, "E", depends_on=[d, c])
    create(fresh_db, "F", depends_on=[b])
    h = create(fresh_db, "H", priority="high").id  # ties with G: older G first
    i = create(fresh_db, "I", priority="critical", depends_on=[done_dep]).id  # ready: its dependency is done
    for n in range(4):
        create(fresh_db, f"waits on A {n}", depends_on=[a])
    bring_to(fresh_db, create(fresh_db, "cancelled dependent", depends_on=[g]).id, "cancelled")
    assert plan(fresh_db) == [
        (i, "start", 0),
        (c, "start", 2),
        (b, "start", 1),
        (g, "start", 0),
        (h, "start", 0),
        (a, "start", 4),
    ]
    assert [task_id for task_id, *_ in plan(fresh_db, limit=3)] == [i, c, b]


def test_unblocks_counts_the_whole_open_chain(fresh_db: Database) -> None:
    head = create(fresh_db, "head").id
    previous = head
    for n in range(10):
        previous = create(fresh_db, f"link {n}", depends_on=[previous]).id
    other = create(fresh_db, "other", priority="low").id
    create(fresh_db, "waits on other", depends_on=[other])
    assert plan(fresh_db) == [(head, "start", 10), (other, "start", 1)]


def test_ties_within_continue_and_review_follow_the_same_rule(fresh_db: Database) -> None:
    low = bring_to(fresh_db, create(fresh_db, "low", priority="low").id, "in_progress").id
    first = bring_to(fresh_db, create(fresh_db, "first", priority="high").id, "in_progress").id
    second = bring_to(fresh_db, create(fresh_db, "second", priority="high").id, "in_progress").id
    create(fresh_db, "needs second", depends_on=[second])
    r1 = bring_to(fresh_db, create(fresh_db, "r1").id, "review").id
    r2 = bring_to(fresh_db, create(fresh_db, "r2").id, "review").id
    assert plan(fresh_db) == [
        (second, "continue", 1),
        (first, "continue", 0),
        (low, "continue", 0),
        (r1, "review", 0),
        (r2, "review", 0),
    ]


def test_reasons_explain_each_suggestion(fresh_db: Database) -> None:
    dep = bring_to(fresh_db, create(fresh_db).id, "done").id
    ready = create(fresh_db, priority="high", depends_on=[dep]).id
    create(fresh_db, depends_on=[ready])
    going = bring_to(fresh_db, create(fresh_db).id, "in_progress").id
    review = bring_to(fresh_db, create(fresh_db).id, "review").id
    reasons = {a.task.id: a.reason for a in next_actions(fresh_db, 5).actions}
    assert reasons[ready].startswith(
        "ready to start (all 1 dependency done), high priority; unblocks 1 open task"
    )
    assert "move it to in_progress" in reasons[ready]
    assert reasons[going].startswith("in progress") and "review" in reasons[going]
    assert "thought_record" in reasons[review] and "done" in reasons[review]
    # Each action carries the full, current task object.
    assert next_actions(fresh_db, 5).actions[0].task == repository.get_task(fresh_db, going)


def test_blocked_lists_what_each_task_waits_on(fresh_db: Database) -> None:
    open_dep = bring_to(fresh_db, create(fresh_db, "open dep").id, "in_progress").id
    gone = bring_to(fresh_db, create(fresh_db, "gone").id, "cancelled").id
    done = bring_to(fresh_db, create(fresh_db, "done").id, "done").id
    waiting = create(fresh_db, "waiting", priority="low", depends_on=[gone, done, open_dep]).id
    marked = bring_to(fresh_db, create(fresh_db, "marked", priority="critical").id, "blocked").id
    both = create(fresh_db, "both", depends_on=[open_dep]).id
    bring_to(fresh_db, both, "blocked")
    result = next_actions(fresh_db, 5)
    assert result.blocked_total == 3
    rows = [(b.task_id, b.status, b.waiting_on) for b in result.blocked]
    assert rows == [
        (marked, "blocked", []),
        (both, "blocked", [open_dep]),
        (waiting, "todo", [open_dep, gone]),  # oldest dependency first; the done one is not waited on
    ]
    reasons = {b.task_id: b.reason for b in result.blocked}
    assert reasons[marked].startswith("marked blocked") and "todo or in_progress" in reasons[marked]
    assert reasons[both] == f"marked blocked and waits on {open_dep} (in_progress)"
    assert f"{gone} (cancelled)" in reasons[waiting] and "reopen it or drop it" in reasons[waiting]
    assert [b.title for b in result.blocked] == ["marked", "both", "waiting"]
    assert waiting not in [a.task.id for a in result.actions]


def test_a_task_becomes_ready_when_its_last_dependency_is_done(fresh_db: Database) -> None:
    dep = create(fresh_db, "dep").id
    task = create(fresh_db, "task", priority="critical").id
    update(fresh_db, task, depends_on=[dep])
    assert plan(fresh_db) == [(dep, "start", 1)]
    bring_to(fresh_db, dep, "done")
    assert plan(fresh_db) == [(task, "start", 0)]
    assert next_actions(fresh_db, 5).blocked_total == 0


def test_the_blocked_list_is_bounded_but_the_total_is_not(fresh_db: Database) -> None:
    dep = create(fresh_db, "dep").id
    for n in range(BLOCKED_SHOWN + 5):
        create(
            fresh_db, f"waiter {n}", priority="high" if n == BLOCKED_SHOWN + 4 else "medium", depends_on=[dep]
        )
    result = next_actions(fresh_db, 5)
    assert result.blocked_total == BLOCKED_SHOWN + 5
    assert len(result.blocked) == BLOCKED_SHOWN
    assert result.blocked[0].title == f"waiter {BLOCKED_SHOWN + 4}"  # highest priority first
    assert [b.title for b in result.blocked[1:4]] == ["waiter 0", "waiter 1", "waiter 2"]
    assert result.actions[0].unblocks == BLOCKED_SHOWN + 5
