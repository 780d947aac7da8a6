"""Migration 0012 gives an existing database the `principal` column; its old rows were stdio's."""

from __future__ import annotations

from pathlib import Path

from colibri.core.modes import Mode
from colibri.core.state import ServerState
from colibri.storage import SQLiteDatabase
from colibri.storage.audit_log import AuditLog
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS


def test_an_old_database_gains_principal_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = SQLiteDatabase.open(path)
    before = [m for m in MIGRATIONS if m.name < "0012"]
    assert len(before) < len(MIGRATIONS)
    migrate(db, before)
    db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at)"
        " VALUES ('c1', 'server_ping', '{}', 'ok', '2026-01-01T00:00:00Z')"
    )
    db.close()

    db = SQLiteDatabase.open(path)
    applied = migrate(db, MIGRATIONS)
    assert sorted(applied) == [m.name for m in MIGRATIONS if m.name >= "0012"]
    assert {"0012_access_tokens", "0012_actions_principal"} <= set(applied)
    assert migrate(db, MIGRATIONS) == []
    state = ServerState(version="t", declared_mode=Mode.FULL)
    state.db, state.mode = db, Mode.FULL
    AuditLog(state).enter("c2", "task_list", "{}", "alice")
    rows = db.execute("SELECT correlation_id, principal FROM actions ORDER BY sequence_no").fetchall()
    db.close()
    assert [tuple(row) for row in rows] == [("c1", "local"), ("c2", "alice")]


def test_old_history_and_records_read_as_local(tmp_path: Path) -> None:
    """Migrations 0013 add `principal` to task history and thought records (SPEC §14); what was
    written before them came over stdio."""
    path = tmp_path / "old.db"
    db = SQLiteDatabase.open(path)
    migrate(db, [m for m in MIGRATIONS if m.name < "0013"])
    db.execute(
        "INSERT INTO tasks (id, title, status, priority, created_at, updated_at)"
        " VALUES ('T-1', 'old', 'todo', 'medium', 'then', 'then')"
    )
    db.execute(
        "INSERT INTO task_history (task_id, version, event, changed_at, changes)"
        " VALUES ('T-1', 1, 'created', 'then', '{}')"
    )
    db.execute("INSERT INTO audit_sessions (session_id, started_at) VALUES ('s', 'then')")
    db.execute(
        "INSERT INTO thought_records (seq, session_id, kind, content, created_at, prev_hash, hash)"
        " VALUES (1, 's', 'plan', 'old', 'then', 'p', 'h')"
    )
    applied = migrate(db, MIGRATIONS)
    history = db.execute("SELECT principal FROM task_history").fetchall()
    records = db.execute("SELECT principal FROM thought_records").fetchall()
    db.close()
    assert {"0013_task_history_principal", "0013_thought_records_principal"} <= set(applied)
    assert [row[0] for row in history] == ["local"]
    assert [row[0] for row in records] == ["local"]
