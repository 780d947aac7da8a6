"""Migration 0033 gives `actions` the `via` of a vouched call: the gateway whose signed statement
named its principal (SPEC §20). On an existing store of either backend every row, its number and its
log entry stay, old rows with `via` NULL; rows written after it keep the gateway on every path a row
takes (opened running, written whole, refused), and the readers show it."""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri.core.identity import Identity
from colibri.domains.log.api import log_action
from colibri.domains.log.status import log_status
from colibri.storage.audit_log import FinishedCall, close_running, insert_finished, open_running
from colibri.storage.audit_read import action_summaries, get_action
from colibri.storage.migrations import migrate
from colibri.tools.catalog import migrations_for
from tests.helpers.stores import store_before

NAME = "0033_actions_via"


def test_an_existing_store_keeps_its_rows_and_records_the_gateway_of_each_vouched_call(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = store_before(NAME, backend, tmp_path, request)
    try:
        with db.atomic() as conn:
            kept = insert_finished(
                conn, FinishedCall("c1", "task_list", "{}", "ok", "ab", "t", 1.0, "gw"), log_action
            )
            running = int(open_running(conn, "c2", "task_list", "{}", "local", "t").fetchone()[0])
            before = get_action(conn, kept)
        assert before is not None and before.via is None  # read from a store without the column

        assert NAME in migrate(db, migrations_for(db.dialect.name))

        ana = Identity("ana", None, "c3", via="gateway")
        with db.atomic() as conn:
            assert close_running(conn, running, "ok", "cd", 2.0, log_action)
            opened = int(open_running(conn, "c3", "task_create", "{}", "ana", "t", None, ana).fetchone()[0])
            assert close_running(conn, opened, "ok", "ef", 3.0, log_action)
            whole = FinishedCall("c4", "task_get", "{}", "ok", "01", "t", 1.0, "bob", via="gw-token")
            insert_finished(conn, whole, log_action)
            refused = FinishedCall(
                "c5", "task_create", "null", "denied", None, "t", 0.0, "bob", None, "scope", "read only",
                via="gw-token",
            )  # fmt: skip
            insert_finished(conn, refused, log_action)
        rows = db.execute(
            "SELECT correlation_id, outcome, principal, token_id, via FROM actions ORDER BY sequence_no"
        ).fetchall()
        assert [tuple(row) for row in rows] == [
            ("c1", "ok", "gw", None, None),
            ("c2", "ok", "local", None, None),
            ("c3", "ok", "ana", "c3", "gateway"),
            ("c4", "ok", "bob", None, "gw-token"),
            ("c5", "denied", "bob", None, "gw-token"),
        ]
        with db.snapshot() as conn:
            shown = get_action(conn, opened)
            summaries = action_summaries(conn, kept, kept + 4)
        assert shown is not None and (shown.principal, shown.via) == ("ana", "gateway")
        assert [summary.via for _, summary in sorted(summaries.items())] == [
            None,
            None,
            "gateway",
            "gw-token",
            "gw-token",
        ]
        assert log_status(db).valid
    finally:
        db.close()
