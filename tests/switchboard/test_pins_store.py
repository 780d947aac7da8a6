"""The pins' store and texts without a switchboard (SPEC §21): migration 0031 on a store of either
backend that holds pins of the digest before §21, approval of exactly the version given or shown,
and a definition written for a person with what would hide or reorder text escaped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colibri.domains.pins import api as pins
from colibri.storage import Database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import migrations_for
from tests.helpers.stores import store_before

NAME = "0031_pin_definitions"
OLD, SEEN, OTHER = "a" * 64, "b" * 64, "c" * 64


def _old_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    return store_before(NAME, backend, tmp_path, request)


def test_0031_keeps_the_pins_before_it_as_version_1_and_approves_only_the_reviewed_version(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = _old_store(backend, tmp_path, request)
    try:
        with db.atomic() as conn:
            conn.execute(
                "INSERT INTO tool_pins (tool, sha256, definition, pinned_at, pinned_by, seen_sha256,"
                " seen_definition, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                ("svc.work", OLD, '{"name":"work"}', "t0", "first listing", SEEN, '{"name":"work2"}', "t1"),
            )
        migrate(db, migrations_for(db.dialect.name))
        with db.atomic() as conn:
            before = pins.find_pin(conn, "svc.work")
            kept = pins.pinned_definition(conn, "svc.work", OLD)
        with pytest.raises(pins.NotTheReviewedVersion, match=f"no `pins show`.*{SEEN}"), db.atomic() as conn:
            pins.approve(conn, "svc.work", "ana", "t2")
        with pytest.raises(pins.NotTheReviewedVersion, match=f"{SEEN}.*{OTHER}"), db.atomic() as conn:
            pins.approve(conn, "svc.work", "ana", "t2", OTHER)
        with db.atomic() as conn:
            pins.mark_shown(conn, "svc.work", SEEN)
            _, after = pins.approve(conn, "svc.work", "ana", "t2")
            stored = pins.find_pin(conn, "svc.work")
            history = conn.execute("SELECT sha256 FROM pin_definitions ORDER BY pinned_at").fetchall()
    finally:
        db.close()
    assert before is not None and before.digest_version == 1 and before.seen_digest_version == 1
    assert before.shown_sha256 is None and kept == '{"name":"work"}'
    assert stored == after and after.sha256 == SEEN and after.definition == '{"name":"work2"}'
    assert after.digest_version == 1 and stored is not None and stored.shown_sha256 is None
    assert [row[0] for row in history] == [OLD, SEEN]


def test_a_definition_is_written_for_a_person_with_hidden_characters_escaped() -> None:
    hostile = {"name": "work", "description": "read\u202egpj.exe\u200b\U000e0041\x85 ~/.ssh <b>", "_meta": {}}
    lines = pins.pretty(json.dumps(hostile))
    text = "\n".join(lines)
    assert "\\u202e" in text and "\\u200b" in text and "\\udb40\\udc41" in text and "\\u0085" in text
    assert not any(ch in text for ch in "\u202e\u200b\U000e0041\x85")
    assert json.loads(text) == hostile  # still the same JSON, escapes and all
    pinned = json.dumps({"name": "work", "description": "x", "execution": {}, "zeta": 1})
    assert pins.changed_fields(pinned, json.dumps(hostile)) == ["description", "_meta", "execution", "zeta"]
    diff = pins.unified_diff("svc.w\u2028ork\n", (OLD, pinned), (SEEN, json.dumps(hostile))).split("\n")
    assert diff[:2] == [
        f"--- svc.w\\u2028ork\\u000a pinned sha256 {OLD}",
        f"+++ svc.w\\u2028ork\\u000a listed sha256 {SEEN}",
    ]
    assert '+  "description": "read\\u202egpj.exe\\u200b\\udb40\\udc41\\u0085 ~/.ssh <b>",' in diff
