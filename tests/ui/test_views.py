"""The pages' data over a real SQLite file: keyset pages, the dependency graph, records by task."""

from __future__ import annotations

import time
from itertools import pairwise

import pytest

from colibri.domains.proofs import sessions
from colibri.domains.tasks.arguments import CreateTaskArgs
from colibri.domains.tasks.service import create_task
from colibri.domains.trail import records
from colibri.storage import Database
from colibri.ui import integrity, trail_views, views


def _task(db: Database, title: str, **fields: object) -> str:
    return create_task(db, CreateTaskArgs.model_validate({"title": title, **fields})).id


def test_board_columns_page_by_keyset_without_repeating(fresh_db: Database) -> None:
    ids = [_task(fresh_db, f"task {n}") for n in range(views.PAGE + 5)]
    first = views.board(fresh_db, {})
    todo = next(column for column in first["columns"] if column.status == "todo")
    assert todo.total == views.PAGE + 5
    assert [task.id for task in todo.tasks] == ids[: views.PAGE]
    assert todo.next_cursor is not None
    second = views.board(fresh_db, {"todo": todo.next_cursor})
    rest = next(column for column in second["columns"] if column.status == "todo")
    assert [task.id for task in rest.tasks] == ids[views.PAGE :]
    assert rest.next_cursor is None


def test_graph_draws_only_edges_between_cards_and_points_rightwards(fresh_db: Database) -> None:
    a = _task(fresh_db, "a")
    b = _task(fresh_db, "b", depends_on=[a])
    c = _task(fresh_db, "c", depends_on=[a, b])
    _task(fresh_db, "lonely")
    graph = views.board(fresh_db, {})["graph"]
    assert sorted((edge.source, edge.target) for edge in graph.edges) == [(a, b), (a, c), (b, c)]
    assert {node.task.id for node in graph.nodes} == {a, b, c}
    assert all(edge.points[0][0] < edge.points[-1][0] for edge in graph.edges)
    assert all(a[0] <= b[0] for edge in graph.edges for a, b in pairwise(edge.points))


def test_task_page_lists_the_records_citing_it(fresh_db: Database) -> None:
    task = _task(fresh_db, "cited")
    session = sessions.start(fresh_db, None).session_id
    records.append(fresh_db, session, "plan", "not about it")
    records.append(fresh_db, session, "analysis", "about it", task_id=task)
    page = views.task_page(fresh_db, task, None)
    assert page is not None
    assert [record.content for record in page["records"]] == ["about it"]
    assert views.task_page(fresh_db, "T-999", None) is None


def test_session_page_pages_records_and_filters_by_kind(fresh_db: Database) -> None:
    session = sessions.start(fresh_db, None).session_id
    for n in range(views.PAGE + 3):
        records.append(fresh_db, session, "plan" if n % 2 else "analysis", f"r{n}")
    page = trail_views.session_page(fresh_db, session, None, None)
    assert page is not None and len(page["records"]) == views.PAGE and page["next_cursor"]
    assert page["integrity"].chain.first_break is None and page["integrity"].seal is None
    rest = trail_views.session_page(fresh_db, session, None, page["next_cursor"])
    assert rest is not None and len(rest["records"]) == 3 and rest["next_cursor"] is None
    plans = trail_views.session_page(fresh_db, session, "plan", None)
    assert plans is not None and {record.kind for record in plans["records"]} == {"plan"}


def test_long_spans_are_checked_in_the_background_and_rechecked(
    fresh_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trail_views, "INLINE_SPAN", 2)
    monkeypatch.setattr(integrity, "MAX_AGE_S", 0.0)
    monkeypatch.setattr(integrity, "CHECKS", integrity.BackgroundChecks())
    monkeypatch.setattr(trail_views, "CHECKS", integrity.CHECKS)
    session = sessions.start(fresh_db, None).session_id
    for n in range(5):
        records.append(fresh_db, session, "plan", f"r{n}")

    def settled(wanted_break: bool) -> integrity.Integrity:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            page = trail_views.session_page(fresh_db, session, None, None)
            assert page is not None
            known = page["integrity"]
            if known.chain is not None and (known.chain.first_break is not None) == wanted_break:
                return known
            time.sleep(0.02)
        raise AssertionError("the background check never reported")

    assert trail_views.session_page(fresh_db, session, None, None)["integrity"].chain is None  # type: ignore[index]
    assert settled(False).chain.checked == 5  # type: ignore[union-attr]
    fresh_db.execute("UPDATE thought_records SET content = 'forged' WHERE seq = 3")
    found = settled(True).chain
    assert found is not None and found.first_break is not None and found.first_break.seq == 3
