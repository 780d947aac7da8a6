"""A database written before the log existed: its records and finished calls are adopted into
the log once, at the first boot that migrates it, and the log then verifies."""

from __future__ import annotations

from pathlib import Path

from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.domains.trail.helpers import bulk_chain
from tests.helpers import clean_env, colibri, query


def test_an_older_database_is_adopted_once_and_verifies(tmp_path: Path) -> None:
    path = tmp_path / "colibri.db"
    db = SQLiteDatabase.open(path)
    migrate(db, [m for m in MIGRATIONS if "log" not in m.name])
    bulk_chain(db, 25)
    with db.atomic() as conn:
        for i in range(4):
            conn.execute(
                "INSERT INTO actions (correlation_id, tool, arguments, outcome, result_hash, started_at,"
                " duration_ms) VALUES (?, 'task_list', '{}', ?, ?, '2026-01-01T00:00:00.000000Z', ?)",
                (f"c{i}", "ok" if i else "running", "ab" * 32, 1.25 * i),
            )
    db.close()
    env = clean_env(tmp_path)
    done = colibri("call", "audit_verify_chain", "{}", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "adopted 28 existing record(s) and call(s)" in done.stderr
    kinds = [row[0] for row in query(path, "SELECT kind FROM log_entries ORDER BY idx")]
    # 25 records and 3 finished calls adopted, then the running row (interrupted at boot) and
    # the audit_verify_chain call itself were logged as they finished.
    assert kinds == ["record"] * 25 + ["action"] * 5
    again = colibri("call", "audit_verify_chain", "{}", env=env)
    assert "adopted" not in again.stderr
    assert '"entries_match_rows": true' in again.stdout and '"tree_matches_entries": true' in again.stdout
