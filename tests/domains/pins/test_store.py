"""The `tool_pins` table on both backends: a tool pinned on its first listing (once, whoever lists
it first), a differing definition noted once, and approval of that version making it the pin."""

from __future__ import annotations

import pytest

from colibri.domains.pins import api as pins
from colibri.storage import Database


def test_a_tool_is_pinned_once_and_its_change_waits_for_approval(fresh_db: Database) -> None:
    with fresh_db.atomic() as conn:
        assert pins.pin_first(conn, "git.commit", "a" * 64, '{"name":"commit"}', "t1")
        assert not pins.pin_first(conn, "git.commit", "b" * 64, '{"name":"other"}', "t2")
        assert not pins.note_change(conn, "git.commit", "a" * 64, '{"name":"commit"}', "t3")
        assert pins.note_change(conn, "git.commit", "b" * 64, '{"name":"commit","x":1}', "t4")
        assert not pins.note_change(conn, "git.commit", "b" * 64, '{"name":"commit","x":1}', "t5")
    with fresh_db.snapshot() as conn:
        [pin] = pins.all_pins(conn)
    assert pin == pins.Pin(
        "git.commit",
        "a" * 64,
        '{"name":"commit"}',
        "t1",
        pins.FIRST_LISTING,
        "b" * 64,
        '{"name":"commit","x":1}',
        "t4",
        seen_digest_version=pins.DIGEST_VERSION,
    )
    assert pin.changed

    with fresh_db.atomic() as conn:
        before, after = pins.approve(conn, "git.commit", "ana", "t6", "b" * 64)
    assert before == pin
    assert after == pins.Pin("git.commit", "b" * 64, '{"name":"commit","x":1}', "t6", "ana")
    with fresh_db.snapshot() as conn:
        assert pins.find_pin(conn, "git.commit") == after
        assert not after.changed


@pytest.mark.parametrize(("tool", "why"), [("git.push", "has no pin"), ("git.commit", "has not changed")])
def test_approval_needs_a_changed_definition(fresh_db: Database, tool: str, why: str) -> None:
    with fresh_db.atomic() as conn:
        pins.pin_first(conn, "git.commit", "a" * 64, "{}", "t1")
    with pytest.raises(pins.NothingToApprove, match=why), fresh_db.atomic() as conn:
        pins.approve(conn, tool, "ana", "t2")
