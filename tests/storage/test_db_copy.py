"""`colibri db copy` SQLite -> PostgreSQL -> SQLite keeps every row, hash and seal, and verifies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from colibri.domains import access
from colibri.domains.log import cosigned
from colibri.domains.proofs import sessions
from colibri.runtime.checkpoints import adopt
from colibri.storage import SQLiteDatabase, open_database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from colibri.verifier.copy import TABLES, _digest, copy_store
from colibri.verifier.online import verify_store
from tests.domains.log.helpers import generate_key
from tests.domains.tasks.helpers import create
from tests.domains.trail.helpers import build_chain, bulk_chain
from tests.helpers import clean_env, colibri
from tests.helpers import postgres as pg


def _source(path: Path) -> None:
    db = SQLiteDatabase.open(path)
    migrate(db, MIGRATIONS)
    bulk_chain(db, 10_000)
    sessions.finalize(db, "bulk")
    db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, result_hash, started_at,"
        " duration_ms, principal) VALUES ('c1', 'task_create', '{}', 'ok', 'h', 'now', 1.25, 'alice')"
    )
    adopt(db)  # the bulk rows join the verifiable log, as a server's boot adopts an older store
    build_chain(db, 60, session_count=3, seal=2)
    for _ in range(5):
        create(db)
    access.create(db, "alice", access.Scope.WRITE, 30, 1_700_000_000.0)
    access.create(db, "bob", access.Scope.READ, None, 1_700_000_000.0)
    access.revoke(db, "bob")
    db.close()


def _checkpoint(path: Path, tmp_path: Path) -> tuple[Path, str]:
    """A checkpoint signed by the real notary (`colibri checkpoint`) with a key made by
    `colibri key generate`: the note file and the verifier key."""
    env = clean_env(tmp_path)
    key, verifier_key = generate_key(tmp_path, env, "example.com/copy")
    made = colibri("checkpoint", "--db", str(path), env={**env, "COLIBRI_SIGNING_KEY": str(key)})
    assert made.returncode == 0, made.stderr
    note = tmp_path / "original.checkpoint"
    note.write_text(made.stdout)
    return note, verifier_key


def _witnessed(path: Path) -> None:
    """A witness's cosignature on the checkpoint, and two witnesses' last submissions (SPEC §16)."""
    db = open_database(str(path))
    try:
        with db.atomic() as conn:
            checkpoint_id = conn.execute("SELECT max(id) FROM log_checkpoints").fetchone()[0]
            cosigned.add_cosignature(conn, checkpoint_id, "w1+key", "— w1 AAAA\n", 1_700_000_000)
            cosigned.record_attempt(conn, "w1+key", "w1", "http://w1", "2026-01-01T00:00:00Z", None)
            cosigned.record_attempt(conn, "w2+key", "w2", None, "2026-01-01T00:00:01Z", "no answer")
    finally:
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
    note, verifier_key = _checkpoint(first, tmp_path)
    _witnessed(first)
    url = postgres_server.new_database(migrated=False)

    there = copy_store(str(first), url)
    assert there.rows["log_checkpoints"] == 1
    assert there.rows["log_cosignatures"] == 1 and there.rows["log_witnesses"] == 2
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

    # The original key's checkpoint checks against both copies (signature, root, consistency).
    for store in (["--db-url", url], ["--db", str(back)]):
        proved = colibri(
            "verify", *store, "--checkpoint", str(note), "--key", verifier_key, env=clean_env(tmp_path)
        )
        assert proved.returncode == 0, proved.stdout + proved.stderr
        assert "signature valid" in proved.stdout and "VALID" in proved.stdout
    # ...and the log commands read either store alike.
    listed = [
        colibri("log", "entries", *store, env=clean_env(tmp_path))
        for store in (["--db-url", url], ["--db", str(back)])
    ]
    assert all(done.returncode == 0 for done in listed), [done.stderr for done in listed]
    assert listed[0].stdout == listed[1].stdout and len(listed[0].stdout.splitlines()) > 10_000
    for target in (url, str(back)):
        db = open_database(target, readonly=True)
        try:
            stored = db.execute("SELECT note FROM log_checkpoints").fetchall()
        finally:
            db.close()
        assert [row[0] for row in stored] == [note.read_text()]


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
