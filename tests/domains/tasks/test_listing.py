"""task_list: every filter, combinations, keyset pagination and cursors."""

from __future__ import annotations

import itertools
import random

import pytest
from pydantic import ValidationError

from colibri.core.cursor import decode_cursor, encode_cursor
from colibri.domains.tasks.arguments import ListTasksArgs
from colibri.domains.tasks.listing import list_tasks
from colibri.domains.tasks.models import Task
from colibri.storage import Database
from tests.domains.tasks.helpers import bring_to, create


def ids(db: Database, **filters: object) -> list[str]:
    """Every matching id, following cursors page by page."""
    found: list[str] = []
    cursor = None
    while True:
        page = list_tasks(db, ListTasksArgs.model_validate({**filters, "cursor": cursor}))
        found.extend(task.id for task in page.tasks)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


@pytest.fixture
def catalogue(fresh_db: Database) -> list[Task]:
    """A small, varied set of tasks whose expected filter results are computed from their fields."""
    rng = random.Random(7)
    tasks = []
    for i in range(40):
        task = create(
            fresh_db,
            f"task {i} {'Parser' if i % 5 == 0 else 'misc'}",
            description=f"notes {i} {'uses 100% CPU' if i % 7 == 0 else 'plain_text'}",
            tags=rng.sample(["api", "db", "ui", "ops"], k=rng.randint(0, 2)),
            assignee=rng.choice([None, "ann", "bob"]),
        )
        status = rng.choice(["todo", "in_progress", "blocked", "review", "done", "cancelled"])
        tasks.append(bring_to(fresh_db, task.id, status))
    return tasks


def test_no_filter_lists_everything_oldest_first(fresh_db: Database, catalogue: list[Task]) -> None:
    assert ids(fresh_db) == [task.id for task in catalogue]
    page = list_tasks(fresh_db, ListTasksArgs())
    assert page.tasks == catalogue and page.next_cursor is None


@pytest.mark.parametrize(
    "status", ["todo", "done", ["in_progress", "review"], ["blocked", "cancelled", "todo"]]
)
def test_status_filter(fresh_db: Database, catalogue: list[Task], status: str | list[str]) -> None:
    wanted = {status} if isinstance(status, str) else set(status)
    expected = [task.id for task in catalogue if task.status in wanted]
    assert expected, "the catalogue should cover this status"
    assert ids(fresh_db, status=status, limit=3) == expected


def test_tag_assignee_and_text_filters(fresh_db: Database, catalogue: list[Task]) -> None:
    assert ids(fresh_db, tag="db") == [t.id for t in catalogue if "db" in t.tags]
    assert ids(fresh_db, tag="d") == []  # exact tag, not a substring
    assert ids(fresh_db, assignee="ann") == [t.id for t in catalogue if t.assignee == "ann"]
    # Case-insensitive, in title or description, and `%` / `_` are literal characters.
    assert ids(fresh_db, text="parser") == [t.id for t in catalogue if "Parser" in t.title]
    assert ids(fresh_db, text="100%") == [t.id for t in catalogue if "100%" in t.description]
    assert ids(fresh_db, text="plain_") == [t.id for t in catalogue if "plain_" in t.description]
    assert ids(fresh_db, text="plain%") == []


def test_filters_combine_with_and(fresh_db: Database, catalogue: list[Task]) -> None:
    combos = itertools.product(
        [None, "todo", ["todo", "done"]], [None, "api"], [None, "bob"], [None, "misc", "notes 1"]
    )
    for status, tag, assignee, text in combos:
        filters = {
            key: value
            for key, value in {"status": status, "tag": tag, "assignee": assignee, "text": text}.items()
            if value is not None
        }
        statuses = {status} if isinstance(status, str) else set(status or [])
        expected = [
            t.id
            for t in catalogue
            if (not statuses or t.status in statuses)
            and (tag is None or tag in t.tags)
            and (assignee is None or t.assignee == assignee)
            and (text is None or text.lower() in (t.title + " " + t.description).lower())
        ]
        assert ids(fresh_db, **filters, limit=4) == expected, filters


def test_paging_through_a_thousand_tasks(fresh_db: Database) -> None:
    for i in range(1000):
        create(fresh_db, f"bulk {i}", tags=["even"] if i % 2 == 0 else [])
    pages = []
    cursor = None
    while True:
        page = list_tasks(fresh_db, ListTasksArgs(limit=37, cursor=cursor))
        pages.append([task.id for task in page.tasks])
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    seen = [task_id for page in pages for task_id in page]
    assert seen == [f"T-{n}" for n in range(1, 1001)]  # no gap, no duplicate, in order
    assert [len(page) for page in pages] == [37] * 27 + [1]
    assert ids(fresh_db, tag="even", limit=200) == [f"T-{n}" for n in range(1, 1001, 2)]


def test_exact_last_page_has_no_cursor(fresh_db: Database) -> None:
    for i in range(4):
        create(fresh_db, str(i))
    first = list_tasks(fresh_db, ListTasksArgs(limit=2))
    assert first.next_cursor is not None
    second = list_tasks(fresh_db, ListTasksArgs(limit=2, cursor=first.next_cursor))
    assert [t.id for t in second.tasks] == ["T-3", "T-4"] and second.next_cursor is None


def test_tasks_created_between_pages_are_neither_skipped_nor_repeated(fresh_db: Database) -> None:
    for i in range(3):
        create(fresh_db, str(i))
    first = list_tasks(fresh_db, ListTasksArgs(limit=2))
    create(fresh_db, "late")
    rest = list_tasks(fresh_db, ListTasksArgs(limit=10, cursor=first.next_cursor))
    assert [t.id for t in first.tasks + rest.tasks] == ["T-1", "T-2", "T-3", "T-4"]


def test_cursor_round_trip_and_bad_cursors() -> None:
    assert decode_cursor(encode_cursor(1234)) == 1234
    for bad in [
        "",
        "garbage",
        "c1.",
        "c1.!!!",
        "c1.bnVsbA",
        encode_cursor(5)[:-2] + "zz",
        "c1.eyJhZnRlciI6LTF9",
    ]:
        with pytest.raises(ValueError, match="next_cursor"):
            decode_cursor(bad)
    with pytest.raises(ValidationError) as caught:
        ListTasksArgs(cursor="not-a-cursor")
    assert caught.value.errors()[0]["loc"] == ("cursor",)
