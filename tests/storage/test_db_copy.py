"""`colibri db copy` SQLite -> PostgreSQL -> SQLite keeps every row, hash and seal, and verifies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from colibri.checkpointing import adopt
from colibri.domains import access
from colibri.domains.log import cosigned
from colibri.domains.pins import api as pins
from colibri.domains.proofs import sessions
from colibri.domains.tasks.arguments import CreateTaskArgs
from colibri.domains.tasks.service import create_task
from colibri.storage import Database, SQLiteDatabase, open_database
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from colibri.verifier.copy import TABLES, copy_store
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
    # What proved the caller (0032): an identity provider's issuer and the token's id.
    db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, result_hash, started_at,"
        " duration_ms, principal, issuer, token_id) VALUES ('c1', 'task_create', '{}', 'ok', 'h', 'now',"
        " 1.25, 'alice', 'https://idp.example.com', 'jti-1')"
    )
    # A refusal's reason and message (0030), and a switchboard's own event, are copied too.
    db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at, duration_ms, principal,"
        " reason, reason_message) VALUES ('c2', 'task_create', '{}', 'denied', 'now', 0, 'bob', 'scope',"
        " 'task_create cannot run: it writes')"
    )
    db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at, duration_ms, principal)"
        " VALUES ('c3', 'switchboard:pins/pin', '{}', 'event', 'now', 0, 'switchboard')"
    )
    adopt(db)  # the bulk rows join the verifiable log, as a server's boot adopts an older store
    build_chain(db, 60, session_count=3, seal=2)
    for _ in range(4):
        create(db)
    create_task(db, CreateTaskArgs(title="by a token"), principal="ana")
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
            # A switchboard's pins (SPEC §15): one approved, one with a changed definition waiting.
            pins.pin_first(conn, "echo.echo", "a" * 64, '{"name":"echo"}', "2026-01-01T00:00:02Z")
            pins.pin_first(conn, "echo.add", "b" * 64, '{"name":"add"}', "2026-01-01T00:00:03Z")
            pins.note_change(conn, "echo.add", "c" * 64, '{"name":"add","title":"x"}', "2026-01-01T00:00:04Z")
    finally:
        db.close()


def _digests(target: str) -> dict[str, str]:
    """Every row of every table, all columns, in key order: written here, apart from the copy's own."""
    db = open_database(target, readonly=True)
    try:
        return {table: _all_rows(db, table, key) for table, key in TABLES}
    finally:
        db.close()


def _all_rows(db: Database, table: str, key: str) -> str:
    rows = db.tuples(f"SELECT * FROM {table} ORDER BY {key}").fetchall()
    return repr([tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in rows])


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
    assert there.rows["tool_pins"] == 2
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
        assert _column(target, "SELECT note FROM log_checkpoints") == [note.read_text()]
        # T-6 was made on each copy above, by a local call
        principals = _column(target, "SELECT principal FROM task_history ORDER BY id")
        assert principals == ["local"] * 4 + ["ana", "local"]


def _column(target: str, sql: str) -> list[object]:
    db = open_database(target, readonly=True)
    try:
        return [row[0] for row in db.execute(sql).fetchall()]
    finally:
        db.close()


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


def test_a_column_added_to_the_source_by_hand_is_not_copied_and_never_reaches_the_sql(tmp_path: Path) -> None:
    """SPEC §14: `db copy` writes only the columns it knows, as quoted identifiers. A source whose
    table gained a column named like SQL must neither break the copy nor run as SQL."""
    source, destination = tmp_path / "s.db", tmp_path / "d.db"
    _source(source)
    db = SQLiteDatabase.open(source)
    db.execute("""ALTER TABLE tasks ADD COLUMN "x"") VALUES (1); DROP TABLE tasks; --" TEXT""")
    db.close()
    done = colibri("db", "copy", str(source), str(destination), env=clean_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "verified: every table identical" in done.stdout
    copied = SQLiteDatabase.open(destination, readonly=True)
    try:
        columns = [row[0] for row in copied.execute("SELECT name FROM pragma_table_info('tasks')")]
        assert copied.execute("SELECT count(*) FROM tasks").fetchone()[0] == 5
    finally:
        copied.close()
    assert not any("DROP" in name for name in columns)
