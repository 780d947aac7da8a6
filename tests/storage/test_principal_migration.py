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
    before = [m for m in MIGRATIONS if not m.name.startswith("0012_")]
    assert len(before) < len(MIGRATIONS)
    migrate(db, before)
    db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at)"
        " VALUES ('c1', 'server_ping', '{}', 'ok', '2026-01-01T00:00:00Z')"
    )
    db.close()

    db = SQLiteDatabase.open(path)
    applied = migrate(db, MIGRATIONS)
    assert sorted(applied) == ["0012_access_tokens", "0012_actions_principal"]
    assert migrate(db, MIGRATIONS) == []
    state = ServerState(version="t", declared_mode=Mode.FULL)
    state.db, state.mode = db, Mode.FULL
    AuditLog(state).enter("c2", "task_list", "{}", "alice")
    rows = db.execute("SELECT correlation_id, principal FROM actions ORDER BY sequence_no").fetchall()
    db.close()
    assert [tuple(row) for row in rows] == [("c1", "local"), ("c2", "alice")]
