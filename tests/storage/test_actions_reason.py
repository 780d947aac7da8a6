"""Migration 0030 gives `actions` a refusal's `reason` and `reason_message` (SPEC §21) and the
outcome `event`, on an existing store of either backend: every row, its number and its log entry
stay; a refusal's row and a row closed as refused keep why; the constraint still refuses an
outcome it does not know.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri.domains.log.api import log_action
from colibri.domains.log.status import log_status
from colibri.storage import Database
from colibri.storage.audit_log import FinishedCall, close_running, insert_finished, open_running
from colibri.storage.errors import IntegrityError
from colibri.storage.migrations import migrate
from colibri.tools.catalog import migrations_for
from tests.helpers.stores import store_before

NAME = "0030_actions_reason"


def _old_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    return store_before(NAME, backend, tmp_path, request)


def test_an_existing_store_keeps_its_rows_and_records_why_a_call_was_refused(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = _old_store(backend, tmp_path, request)
    try:
        with db.atomic() as conn:
            kept = insert_finished(
                conn, FinishedCall("c1", "echo.echo", "{}", "ok", "ab", "t", 1.0, "ana"), log_action
            )
            running = int(open_running(conn, "c2", "echo.slow", "{}", "ana", "t").fetchone()[0])
        with pytest.raises(IntegrityError), db.atomic() as conn:
            conn.execute(
                "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at, principal)"
                " VALUES ('c0', 'switchboard:pins/pin', '{}', 'event', 't', 'switchboard')"
            )

        assert NAME in migrate(db, migrations_for(db.dialect.name))

        refused = FinishedCall(
            "c3", "echo.echo", "{}", "denied", None, "t", 0.0, "ci", None, "policy:ci", "not admitted"
        )
        event = FinishedCall("c4", "switchboard:pins/pin", "{}", "event", None, "t", 0.0, "switchboard")
        with db.atomic() as conn:
            insert_finished(conn, refused, log_action)
            insert_finished(conn, event, log_action)
            assert close_running(conn, running, "denied", None, 0.0, log_action, ("rate_limit", "over"))
        rows = db.execute(
            "SELECT sequence_no, correlation_id, outcome, reason, reason_message FROM actions"
            " ORDER BY sequence_no"
        ).fetchall()
        # (PostgreSQL's sequence moves on for the insert refused above: numbers are compared, not counted)
        assert [tuple(row)[1:] for row in rows] == [
            ("c1", "ok", None, None),
            ("c2", "denied", "rate_limit", "over"),
            ("c3", "denied", "policy:ci", "not admitted"),
            ("c4", "event", None, None),
        ]
        assert [row[0] for row in rows][:2] == [kept, running]
        with pytest.raises(IntegrityError), db.atomic() as conn:
            insert_finished(conn, FinishedCall("c5", "x.y", "{}", "maybe", None, "t", 0.0, "ana"), log_action)
        assert log_status(db).valid
    finally:
        db.close()
