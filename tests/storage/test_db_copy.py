"""`colibri db copy` SQLite -> PostgreSQL -> SQLite keeps every row, hash and seal, and verifies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from colibri.domains import access
from colibri.domains.proofs import sessions
from colibri.storage import SQLiteDatabase, open_database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from colibri.verifier.copy import TABLES, _digest, copy_store
from colibri.verifier.online import verify_store
from tests.domains.tasks.helpers import create
from tests.domains.trail.helpers import build_chain, bulk_chain
from tests.helpers import postgres as pg


def _source(path: Path) -> None:
    db = SQLiteDatabase.open(path)
    migrate(db, MIGRATIONS)
    bulk_chain(db, 10_000)
    sessions.finalize(db, "bulk")
    build_chain(db, 60, session_count=3, seal=2)
    for _ in range(5):
        create(db)
    access.create(db, "alice", access.Scope.WRITE, 30, 1_700_000_000.0)
    access.create(db, "bob", access.Scope.READ, None, 1_700_000_000.0)
    access.revoke(db, "bob")
    db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, result_hash, started_at,"
        " duration_ms, principal) VALUES ('c1', 'task_create', '{}', 'ok', 'h', 'now', 1.25, 'alice')"
    )
    db.close()


def _digests(target: str) -> dict[str, str]:
    db = open_database(target, readonly=True)
    try:
        return {table: _digest(db, table, key) for table, key in TABLES}
    finally:
        db.close()


def test_sqlite_to_postgres_to_sqlite_keeps_everything_and_verifies(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> None:
    first, back = tmp_path / "first.db", tmp_path / "back.db"
    _source(first)
    url = postgres_server.new_database(migrated=False)

    there = copy_store(str(first), url)
    assert there.records == 10_060 and there.sealed == 3 and there.rows["thought_records"] == 10_060
    assert there.rows["access_tokens"] == 2 and there.rows["tasks"] == 5

    done = subprocess.run(
        [sys.executable, "-m", "colibri", "db", "copy", url, str(back)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "verified: every table identical; chain valid (10,060 records" in done.stdout
    assert "3 sealed session(s) match" in done.stdout

    original = _digests(str(first))
    assert _digests(url) == original == _digests(str(back))
    for target in (str(first), url, str(back)):
        db = open_database(target, readonly=True)
        try:
            report = verify_store(db)
            assert report.valid and report.checked == 10_060 and len(report.seals) == 3
            assert report.head_hash == there.head_hash
        finally:
            db.close()

    # The copy is a working store: ids continue after the copied ones on both backends.
    for target in (url, str(back)):
        db = open_database(target)
        try:
            assert create(db).id == "T-6"
        finally:
            db.close()

    checked = subprocess.run(
        [sys.executable, "-m", "colibri", "verify", "--db-url", url],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0 and "VALID" in checked.stdout, checked.stdout + checked.stderr


def test_a_copy_into_a_store_that_holds_data_is_refused(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> None:
    source = tmp_path / "s.db"
    _source(source)
    url = postgres_server.new_database()
    db = open_database(url)
    create(db)
    db.close()
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "db", "copy", str(source), url],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "already holds data (table tasks)" in done.stderr
    db = open_database(url, readonly=True)
    try:
        assert db.execute("SELECT count(*) FROM thought_records").fetchone()[0] == 0
    finally:
        db.close()
