"""task_next_actions keeps its reading of the board while `task_board.version` holds (SPEC §18):
on both backends, every change is seen at once, whoever makes it and however."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from colibri.domains.tasks.next_actions import next_actions
from colibri.storage import Database
from tests.domains.tasks.helpers import bring_to, create, update


def _starts(db: Database) -> list[tuple[str, str]]:
    return [(action.task.id, action.task.title) for action in next_actions(db, 10).actions]


def test_an_unchanged_board_is_answered_from_what_was_read(fresh_db: Database) -> None:
    create(fresh_db, "first")
    answer = next_actions(fresh_db, 10)
    assert next_actions(fresh_db, 10) is answer, "read once, answered twice"
    assert next_actions(fresh_db, 1).actions == answer.actions[:1]


def test_a_change_through_colibri_is_seen_at_once(fresh_db: Database) -> None:
    first = create(fresh_db, "first").id
    assert _starts(fresh_db) == [(first, "first")]
    update(fresh_db, first, title="renamed")
    assert _starts(fresh_db) == [(first, "renamed")]
    second = create(fresh_db, "second", priority="critical").id
    assert _starts(fresh_db) == [(second, "second"), (first, "renamed")]
    bring_to(fresh_db, second, "done")
    assert _starts(fresh_db) == [(first, "renamed")]


def test_a_change_by_another_connection_or_outside_colibri_is_seen(
    fresh_db: Database, open_store: Callable[..., Database]
) -> None:
    """Another replica's change, and a hand edit that bypasses Colibri, both move the version."""
    first = create(fresh_db, "first").id
    assert _starts(fresh_db) == [(first, "first")]
    other = open_store()
    second = create(other, "from another replica", priority="critical").id
    assert _starts(fresh_db) == [(second, "from another replica"), (first, "first")]
    other.execute("UPDATE tasks SET title = 'edited by hand' WHERE id = ?", (first,))
    other.execute("DELETE FROM task_dependencies")  # nothing to delete: the statement alone counts
    assert _starts(fresh_db)[1] == (first, "edited by hand")


def test_a_reading_inside_a_rolled_back_transaction_is_never_kept(fresh_db: Database) -> None:
    """A version taken inside a write transaction may be undone, then given to another change."""
    first = create(fresh_db, "first").id
    with pytest.raises(ZeroDivisionError):
        _rename_then_roll_back(fresh_db, first)
    update(fresh_db, first, title="kept")  # takes the version the rolled back change had
    assert _starts(fresh_db) == [(first, "kept")]


def _rename_then_roll_back(db: Database, task_id: str) -> None:
    with db.atomic():
        update(db, task_id, title="undone")
        assert _starts(db) == [(task_id, "undone")]
        raise ZeroDivisionError
