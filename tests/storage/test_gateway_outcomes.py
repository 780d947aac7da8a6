"""Migration 0025 widens the `actions` outcomes by `timeout` and `unavailable` (SPEC §15), on an
existing store of either backend: every row, its number and its log entry stay, numbering goes on
after the highest number ever given, and the constraint still refuses any other outcome.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri.domains.log.api import log_action
from colibri.domains.log.status import log_status
from colibri.storage import Database, open_database
from colibri.storage.audit_log import FinishedCall, close_running, insert_finished, open_running
from colibri.storage.errors import IntegrityError
from colibri.storage.migrations import migrate
from colibri.tools.catalog import migrations_for
from tests.helpers import postgres as pg

NAME = "0025_actions_gateway_outcomes"
# The columns the table has at 0025 (later migrations add more: 0030 reason, reason_message).
COLUMNS = (
    "sequence_no, correlation_id, tool, arguments, outcome, result_hash, started_at, duration_ms, principal"
)


def _old_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    if backend == "sqlite":
        db = open_database(tmp_path / "old.db")
    else:
        server: pg.PostgresServer = request.getfixturevalue("postgres_server")
        db = open_database(server.new_database(migrated=False))
    migrate(db, [m for m in migrations_for(db.dialect.name) if m.name < NAME])
    return db


def _row(outcome: str, tool: str = "echo.echo") -> FinishedCall:
    return FinishedCall("c-" + outcome, tool, '{"sha256":"00"}', outcome, "ab" * 32, "then", 1.5, "alice")


def test_an_existing_store_keeps_its_rows_and_takes_the_new_outcomes(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = _old_store(backend, tmp_path, request)
    try:
        with db.atomic() as conn:
            first = insert_finished(conn, _row("ok"), log_action)
            running = int(open_running(conn, "c-run", "task_list", "{}", "local", "then").fetchone()[0])
            insert_finished(conn, _row("denied"), log_action)
            # The highest number ever given, above every row left: a row not yet in the log, gone.
            gone = int(open_running(conn, "c-gone", "task_list", "{}", "local", "then").fetchone()[0])
            conn.execute("DELETE FROM actions WHERE sequence_no = ?", (gone,))
        with pytest.raises(IntegrityError), db.atomic() as conn:
            insert_finished(conn, _row("timeout"), log_action)
        before = [tuple(row) for row in db.execute(f"SELECT {COLUMNS} FROM actions ORDER BY sequence_no")]

        assert migrate(db, migrations_for(db.dialect.name)) == [
            m.name for m in migrations_for(db.dialect.name) if m.name >= NAME
        ]

        assert [
            tuple(row) for row in db.execute(f"SELECT {COLUMNS} FROM actions ORDER BY sequence_no")
        ] == before
        with db.atomic() as conn:
            timeout = insert_finished(conn, _row("timeout"), log_action)
            insert_finished(conn, _row("unavailable"), log_action)
            assert close_running(conn, running, "interrupted", None, 0.0, log_action)
        assert first < running < gone < timeout
        with pytest.raises(IntegrityError), db.atomic() as conn:
            insert_finished(conn, _row("maybe"), log_action)
        assert log_status(db).valid
    finally:
        db.close()


def test_the_sqlite_rebuild_is_one_transaction(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A store the rebuild cannot copy (a column another migration added first) is left as it was."""
    db = _old_store("sqlite", tmp_path, request)  # SQLite's rebuild; PostgreSQL alters in place
    try:
        db.execute("ALTER TABLE actions ADD COLUMN note TEXT")  # not a column 0025 knows
        with db.atomic() as conn:
            insert_finished(conn, _row("ok"), log_action)
        with pytest.raises(Exception, match="columns"):
            migrate(db, migrations_for("sqlite"))
        names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert "actions" in names and "actions_rebuilt" not in names
        assert db.execute("SELECT count(*) FROM actions").fetchone()[0] == 1
        assert db.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (NAME,)).fetchone() is None
    finally:
        db.close()
