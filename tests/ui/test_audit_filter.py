"""The audit's tool filter on both backends: a name's start or a glob, any case, and the LIKE
characters in a tool's name (`_`, `%`) taken as themselves."""

from __future__ import annotations

import pytest

from colibri.core.clock import utc_now
from colibri.storage import Database
from colibri.ui import audit_views

TOOLS = ("github.create_issue", "github.comment", "fs.read_file", "task_update", "taskXupdate", "odd%name")


def _called(db: Database, tool: str) -> None:
    db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at, principal)"
        " VALUES (?, ?, '{}', 'ok', ?, 'ana')",
        (f"c-{tool}", tool, utc_now()),
    )


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("github.", {"github.create_issue", "github.comment"}),
        ("GitHub.C", {"github.create_issue", "github.comment"}),
        ("*.read_*", {"fs.read_file"}),
        ("github.c?mment", {"github.comment"}),
        ("task_", {"task_update"}),  # `_` is itself, not LIKE's one character
        ("task_*", {"task_update"}),
        ("odd%", {"odd%name"}),
        ("nothing", set()),
    ],
)
def test_the_tool_filter_takes_a_prefix_or_a_glob(fresh_db: Database, tool: str, expected: set[str]) -> None:
    for name in TOOLS:
        _called(fresh_db, name)
    page = audit_views.audit_page(fresh_db, None, {"tool": tool, "principal": None, "outcome": None})
    assert {row.tool for row in page["actions"]} == expected
    assert page["given"] == [("tool", tool)]
