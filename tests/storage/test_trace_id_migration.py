"""Migration 0020 gives `actions` a nullable `trace_id` (SPEC §17) on SQLite and PostgreSQL: old rows
read NULL, a traced call's row keeps its trace id, and the log's action entry does not change."""

from __future__ import annotations

from pathlib import Path

import psycopg

from colibri.core.modes import Mode
from colibri.core.state import ServerState
from colibri.storage import SQLiteDatabase, open_database
from colibri.storage.audit_log import AuditLog, FinishedCall
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.helpers import postgres as pg

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def test_an_old_sqlite_database_gains_trace_id(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = SQLiteDatabase.open(path)
    migrate(db, [m for m in MIGRATIONS if m.name < "0020"])
    db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at)"
        " VALUES ('c1', 'server_ping', '{}', 'ok', '2026-01-01T00:00:00Z')"
    )
    assert "0020_actions_trace_id" in migrate(db, MIGRATIONS)
    state = ServerState(version="t", declared_mode=Mode.FULL)
    state.db, state.mode = db, Mode.FULL
    audit = AuditLog(state)
    audit.enter("c2", "task_list", "{}", "alice", trace_id=TRACE)
    audit.later(FinishedCall("c3", "server_ping", "{}", "ok", "h", "then", 1.0, "local", TRACE))
    audit.flush_later()
    rows = db.execute("SELECT correlation_id, trace_id FROM actions ORDER BY sequence_no").fetchall()
    db.close()
    assert [tuple(row) for row in rows] == [("c1", None), ("c2", TRACE), ("c3", TRACE)]


def test_postgres_has_trace_id_too(postgres_server: pg.PostgresServer) -> None:
    url = postgres_server.new_database()
    db = open_database(url)
    try:
        state = ServerState(version="t", declared_mode=Mode.FULL)
        state.db, state.mode = db, Mode.FULL
        with db.atomic():
            AuditLog(state).enter("c1", "task_list", "{}", "alice", trace_id=TRACE)
    finally:
        db.close()
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT trace_id FROM actions WHERE correlation_id = 'c1'").fetchone()
        applied = conn.execute(
            "SELECT name FROM schema_migrations WHERE name = '0020_actions_trace_id'"
        ).fetchone()
    assert row == (TRACE,) and applied is not None
