"""Migration 0035 (SPEC §22): `actions` takes the outcome `held`, and the `approvals` table keeps each
held call. On an existing store of either backend every row keeps its number, columns and log entry;
afterwards a held call, its decision (or a refused one), the one call an approval covers and a
restart's interruption are each a row and a log entry, and the log still checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from colibri.core.clock import utc_now
from colibri.core.errors import StorageError
from colibri.domains.approvals import api as approvals
from colibri.domains.log.api import log_action
from colibri.domains.log.status import log_status
from colibri.storage import open_database
from colibri.storage.audit_log import FinishedCall, insert_finished
from colibri.storage.migrations import migrate
from colibri.tools.catalog import migrations_for
from colibri.verifier.copy import copy_store
from tests.helpers.stores import store_before

NAME = "0035_actions_held"


def _held(principal: str, digest: str) -> approvals.Held:
    return approvals.Held(
        f"c-{principal}-{digest}", principal, "shell.exec", digest, '{"cmd":"ls"}', "ab" * 32, "{}",
        '{"rule":"approvals.rules[0]"}', ("carol", "group:sre"), "approver",
    )  # fmt: skip


def test_an_existing_store_keeps_its_rows_and_then_holds_decides_and_covers_one_call(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = store_before(NAME, backend, tmp_path, request)
    try:
        with db.atomic() as conn:
            old = FinishedCall(
                "c1", "echo.work", "{}", "ok", "ab", "t", 1.0, "ana", issuer="i", token_id="j", via="g"
            )
            kept = insert_finished(conn, old, log_action)
        assert NAME in migrate(db, migrations_for(db.dialect.name))
        now = utc_now()
        with db.atomic() as conn:
            row = conn.execute("SELECT sequence_no, outcome, issuer, token_id, via FROM actions").fetchone()
            first = approvals.hold(conn, _held("ana", "d1"), now, 900, log_action)
            second = approvals.hold(conn, _held("bob", "d2"), now, 900, log_action)
            assert approvals.take(conn, "ana", "shell.exec", "d1", now) is None  # not approved yet
        assert tuple(row) == (kept, "ok", "i", "j", "g")
        with pytest.raises(approvals.NotDecidable) as own:
            approvals.decided(db, first.id, True, "ana", (), "", "cli", log_action)
        with pytest.raises(approvals.NotDecidable) as stranger:
            approvals.decided(db, first.id, True, "bob", (), "", "cli", log_action)
        by_group = approvals.decided(db, first.id, True, "dan", ("sre",), "ok", "ui", log_action)
        with db.atomic() as conn:
            assert approvals.take(conn, "bob", "shell.exec", "d1", utc_now()) is None  # another principal
            assert approvals.take(conn, "ana", "shell.exec", "d9", utc_now()) is None  # other arguments
            assert approvals.take(conn, "ana", "shell.exec", "d1", utc_now()) == first.id
            assert approvals.take(conn, "ana", "shell.exec", "d1", utc_now()) is None  # once
            interrupted = approvals.interrupt_pending(conn, utc_now(), log_action)
            assert approvals.find(conn, second.id).state == "interrupted"  # type: ignore[union-attr]
            later = "SELECT tool, outcome, principal, reason FROM actions WHERE sequence_no > ?"
            outcomes = [
                tuple(row) for row in conn.execute(later + " ORDER BY sequence_no", (kept,)).fetchall()
            ]
        assert (own.value.why, stranger.value.why) == ("own_call", "not_an_approver")
        assert (by_group.state, by_group.decided_by, by_group.decided_via) == ("approved", "dan", "ui")
        assert interrupted == 1
        assert outcomes == [
            ("shell.exec", "held", "ana", "approval_held"),
            ("shell.exec", "held", "bob", "approval_held"),
            ("switchboard:approvals/approve", "denied", "ana", "approval:own_call"),
            ("switchboard:approvals/approve", "denied", "bob", "approval:not_an_approver"),
            ("switchboard:approvals/approve", "event", "dan", None),
            ("shell.exec", "interrupted", "bob", "approval_interrupted"),
        ]
        assert log_status(db).valid
    finally:
        db.close()


def test_held_is_refused_by_a_store_before_0035(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = store_before(NAME, backend, tmp_path, request)
    try:
        with pytest.raises(StorageError), db.atomic() as conn:
            insert_finished(conn, FinishedCall("c", "e.w", "{}", "held", None, "t", 0.0, "ana"), log_action)
    finally:
        db.close()


@pytest.mark.sqlite_only
def test_db_copy_takes_the_held_calls_along(
    backend: str, store: str, tmp_path: Path, open_store: Any
) -> None:
    """`colibri db copy` of a switchboard's store keeps its approvals: an approval given and not yet
    used still covers its call in the copy."""
    db = open_store()
    with db.atomic() as conn:
        held = approvals.hold(conn, _held("ana", "d1"), utc_now(), 900, log_action)
    approvals.decided(db, held.id, True, "carol", (), "ok", "cli", log_action)
    copy_store(store, str(tmp_path / "copy.db"))
    copied = open_database(tmp_path / "copy.db")
    try:
        with copied.atomic() as conn:
            assert approvals.take(conn, "ana", "shell.exec", "d1", utc_now()) == held.id
    finally:
        copied.close()


@pytest.mark.sqlite_only
def test_a_hold_past_its_ttl_can_no_longer_be_decided(backend: str, open_store: Any) -> None:
    db = open_store()
    with db.atomic() as conn:
        held = approvals.hold(conn, _held("ana", "d1"), "2026-01-01T00:00:00.000000Z", 60, log_action)
    with pytest.raises(approvals.NotDecidable) as late:
        approvals.decided(db, held.id, True, "carol", (), "", "cli", log_action)
    with db.snapshot() as conn:
        after = approvals.find(conn, held.id)
        refused = conn.execute("SELECT principal, reason FROM actions WHERE outcome = 'denied'").fetchall()
    assert late.value.why == "expired" and "expired at 2026-01-01T00:01:00" in str(late.value)
    assert after is not None and after.state == "expired" and after.arguments is None
    assert [tuple(row) for row in refused] == [("carol", "approval:expired")]
