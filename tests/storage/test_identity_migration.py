"""Migration 0032 gives `actions` the `issuer` and `token_id` of what proved a call's caller
(SPEC §20), on an existing store of either backend: every row, its number and its log entry stay,
the old rows with both NULL; rows written after it keep what they are given, on every path a row
takes (opened running, written whole, refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri.core.identity import Identity
from colibri.domains.log.api import log_action
from colibri.domains.log.status import log_status
from colibri.storage import Database
from colibri.storage.audit_log import FinishedCall, close_running, insert_finished, open_running
from colibri.storage.migrations import migrate
from colibri.tools.catalog import migrations_for
from tests.helpers.stores import store_before

NAME = "0032_actions_identity"
DIGEST = "ab" * 32


def _old_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    return store_before(NAME, backend, tmp_path, request)


def test_an_existing_store_keeps_its_rows_and_records_what_proved_each_caller(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = _old_store(backend, tmp_path, request)
    try:
        with db.atomic() as conn:
            kept = insert_finished(
                conn, FinishedCall("c1", "echo.echo", "{}", "ok", "ab", "t", 1.0, "ana"), log_action
            )
            running = int(open_running(conn, "c2", "task_list", "{}", "ana", "t").fetchone()[0])

        assert NAME in migrate(db, migrations_for(db.dialect.name))

        ana = Identity("ana", None, DIGEST)
        oauth = Identity("ben@example.com", "https://idp.example.com", "jti-1")
        with db.atomic() as conn:
            assert close_running(conn, running, "ok", "cd", 2.0, log_action)
            opened = int(open_running(conn, "c3", "task_create", "{}", "ana", "t", None, ana).fetchone()[0])
            assert close_running(conn, opened, "ok", "ef", 3.0, log_action)
            insert_finished(
                conn,
                FinishedCall(
                    "c4",
                    "echo.echo",
                    "{}",
                    "ok",
                    "01",
                    "t",
                    1.0,
                    oauth.principal,
                    issuer=oauth.issuer,
                    token_id=oauth.token_id,
                ),
                log_action,
            )
            insert_finished(
                conn,
                FinishedCall(
                    "c5",
                    "echo.echo",
                    "null",
                    "denied",
                    None,
                    "t",
                    0.0,
                    "ana",
                    None,
                    "scope",
                    "read only",
                    None,
                    DIGEST,
                ),
                log_action,
            )
        rows = db.execute(
            "SELECT sequence_no, correlation_id, outcome, principal, issuer, token_id, reason FROM actions"
            " ORDER BY sequence_no"
        ).fetchall()
        assert [tuple(row)[1:] for row in rows] == [
            ("c1", "ok", "ana", None, None, None),
            ("c2", "ok", "ana", None, None, None),
            ("c3", "ok", "ana", None, DIGEST, None),
            ("c4", "ok", "ben@example.com", "https://idp.example.com", "jti-1", None),
            ("c5", "denied", "ana", None, DIGEST, "scope"),
        ]
        assert [row[0] for row in rows][:2] == [kept, running]
        assert log_status(db).valid
    finally:
        db.close()
