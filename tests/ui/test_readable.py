"""What the pages make of stored values: human times, values as values, folded JSON, strict queries,
and the board's filters with their counts (on both backends)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from colibri.domains.tasks.arguments import CreateTaskArgs, UpdateTaskArgs
from colibri.domains.tasks.service import create_task, update_task
from colibri.storage import Database
from colibri.ui import views
from colibri.ui.query import BadQuery, limited, parse_query
from colibri.ui.times import human, parsed, time_tag
from colibri.ui.values import FOLD_AT, field_value, pretty_json


@pytest.fixture
def utc_zone() -> Iterator[None]:
    """This process's local zone set to UTC for the test (the pages show the server's zone)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.mark.usefixtures("utc_zone")
def test_times_read_short_with_the_exact_utc_on_hover() -> None:
    stamp = "2026-05-12T14:02:11.123456Z"
    moment = parsed(stamp)
    assert moment is not None
    assert human(moment, datetime(2026, 5, 12, 20, 0, tzinfo=UTC)) == "14:02:11"
    assert human(moment, datetime(2026, 8, 1, tzinfo=UTC)) == "12 May 14:02"
    assert human(moment, datetime(2027, 1, 1, tzinfo=UTC)) == "12 May 2026 14:02"
    tag = str(time_tag(stamp))
    assert (
        'title="2026-05-12 14:02:11.123456 UTC"' in tag
        and 'datetime="2026-05-12T14:02:11.123456+00:00"' in tag
    )
    assert str(time_tag("not <a> time")) == "not &lt;a&gt; time"  # an altered value, shown as stored
    assert "—" in str(time_tag(None))


def test_history_values_are_values_never_python_reprs() -> None:
    assert str(field_value("assignee", None)) == '<span class="none">none</span>'
    assert str(field_value("tags", [])) == '<span class="none">none</span>'
    assert (
        str(field_value("tags", ["db", "<x>"]))
        == '<span class="tag">db</span><span class="tag">&lt;x&gt;</span>'
    )
    assert str(field_value("depends_on", ["T-1"])) == '<a href="/tasks/T-1">T-1</a>'
    assert str(field_value("title", "Design <the> schema")) == "Design &lt;the&gt; schema"
    long = str(field_value("description", "word " * 100))
    assert long.startswith('<details class="fold"><summary>') and "(500 characters)" in long


def test_arguments_are_indented_json_with_long_strings_folded() -> None:
    html = str(pretty_json('{"path": "/srv", "content": "' + "x" * (FOLD_AT + 1) + '", "n": [1, null]}'))
    assert html.startswith("{\n  &#34;path&#34;: &#34;/srv&#34;,")
    assert f"({FOLD_AT + 1:,} characters)" in html and html.count("<details") == 1
    assert "null" in html and "\\u0000" not in html
    assert str(pretty_json("<not json>")) == "&lt;not json&gt;"


def test_queries_are_read_as_utf_8_and_bounded() -> None:
    assert parse_query(b"assignee=ana&text=caf%C3%A9+bar&tag=") == {
        "assignee": "ana",
        "text": "café bar",
        "tag": "",
    }
    assert parse_query(b"tag=a&tag=b") == {"tag": "a"}
    with pytest.raises(BadQuery, match="the value of tag is not UTF-8 text"):
        parse_query(b"tag=%FF")
    with pytest.raises(BadQuery, match="a query parameter's name is not UTF-8"):
        parse_query(b"%C3=1")
    params = {"tag": "t" * 65, "text": ""}
    assert limited(params, "text") is None
    with pytest.raises(BadQuery, match=r"tag is 65 characters long .* it may have at most 64"):
        limited(params, "tag", 64)


def _task(db: Database, title: str, **fields: object) -> str:
    return create_task(db, CreateTaskArgs.model_validate({"title": title, **fields})).id


def test_board_filters_combine_and_the_counts_follow(fresh_db: Database) -> None:
    one = _task(fresh_db, "Design the schema", tags=["db"], assignee="ana")
    _task(fresh_db, "Write migrations", tags=["db"], assignee="bo")
    three = _task(fresh_db, "Review the docs", tags=["docs"], assignee="ana")
    update_task(
        fresh_db,
        UpdateTaskArgs.model_validate({"task_id": one, "status": "in_progress", "expected_version": 1}),
    )

    def shown(**given: str) -> tuple[list[str], dict[str, int], int]:
        page = views.board(fresh_db, {}, views.BoardFilter(**given))
        ids = [task.id for column in page["columns"] for task in column.tasks]
        return ids, {column.status: column.total for column in page["columns"] if column.total}, page["total"]

    assert shown(assignee="ana") == ([three, one], {"todo": 1, "in_progress": 1}, 2)
    assert shown(assignee="ana", tag="db") == ([one], {"in_progress": 1}, 1)
    assert shown(text="REVIEW") == ([three], {"todo": 1}, 1)  # any case, in the title or description
    assert shown(text="100%_") == ([], {}, 0)  # LIKE's wildcards match only themselves
    ids, counts, total = shown()
    assert (
        sorted(ids) == sorted([one, "T-2", three]) and counts == {"todo": 2, "in_progress": 1} and total == 3
    )
