"""`colibri verify` as a user runs it: a real subprocess, its exit code, stdout and stderr."""

from __future__ import annotations

import fcntl
import hashlib
import os
import pty
import sqlite3
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from colibri.storage import Database
from tests.domains.trail.helpers import build_chain, bulk_chain, raw_connection

# The offline verifier reads a SQLite file itself (PostgreSQL stores verify with --db-url).
pytestmark = pytest.mark.sqlite_only


def colibri_verify(*args: str, stderr: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "colibri", "verify", *args],
        capture_output=stderr == subprocess.PIPE,
        stdout=None if stderr == subprocess.PIPE else subprocess.PIPE,
        stderr=None if stderr == subprocess.PIPE else stderr,
        text=True,
        timeout=120,
        check=False,
    )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_intact_file_passes_and_is_left_byte_for_byte_unchanged(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 30, session_count=3, seal=2)
    path = fresh_db.path
    fresh_db.close()
    before = _digest(path)
    done = colibri_verify("--db", str(path))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "records checked:  30 " in out
    assert "sessions checked: 2 sealed root(s) recomputed, 0 mismatch(es)" in out
    assert "first break:      none" in out and "result:           VALID" in out
    assert done.stderr == ""  # no progress bar: stderr is a pipe and the file is small
    assert _digest(path) == before

    one = colibri_verify("--db", str(path), "--session", ids[0])
    assert one.returncode == 0 and "records checked:  30 " in one.stdout and f"session {ids[0]}" in one.stdout
    assert _digest(path) == before


def test_a_break_exits_1_and_names_seq_and_reason(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 30, session_count=3, seal=1)
    path = fresh_db.path
    fresh_db.close()
    conn = raw_connection(path)
    conn.execute("UPDATE thought_records SET created_at = '1999-01-01T00:00:00.000000Z' WHERE seq = 7")
    conn.execute("UPDATE session_seals SET leaf_count = 3 WHERE session_id = ?", (ids[0],))
    conn.close()
    done = colibri_verify("--db", str(path))
    assert done.returncode == 1
    assert "first break:      seq 7: hash_mismatch (expected " in done.stdout
    assert (
        f"seal mismatch:    session {ids[0]}: " in done.stdout and "result:           BROKEN" in done.stdout
    )
    # seq 7 belongs to ids[0], but ids[2]'s records are linked through it: its check sees the break.
    other = colibri_verify("--db", str(path), "--session", ids[2])
    assert other.returncode == 1 and "first break:      seq 7: hash_mismatch" in other.stdout


def test_an_unusable_file_or_session_exits_2_with_a_reason(tmp_path: Path, fresh_db: Database) -> None:
    missing = colibri_verify("--db", str(tmp_path / "absent.db"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr and missing.stdout == ""

    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not SQLite at all" * 100)
    not_db = colibri_verify("--db", str(junk))
    assert not_db.returncode == 2 and "not a readable SQLite database" in not_db.stderr

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE unrelated (x)").connection.close()
    foreign = colibri_verify("--db", str(other))
    assert (
        foreign.returncode == 2
        and "not a Colibri database" in foreign.stderr
        and "thought_records" in foreign.stderr
    )

    no_session = colibri_verify("--db", str(fresh_db.path), "--session", "ghost")
    assert no_session.returncode == 2 and "no audit session 'ghost'" in no_session.stderr


def test_the_default_path_comes_from_colibri_db_path(fresh_db: Database) -> None:
    build_chain(fresh_db, 3)
    env = {**os.environ, "COLIBRI_DB_PATH": str(fresh_db.path)}
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "verify"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and str(fresh_db.path) in done.stdout


def test_a_large_file_shows_progress_on_a_terminal_only(fresh_db: Database) -> None:
    bulk_chain(fresh_db, 60_000)
    path = str(fresh_db.path)
    quiet = colibri_verify("--db", path)
    assert quiet.returncode == 0 and quiet.stderr == "" and "records checked:  60,000 " in quiet.stdout

    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a real terminal's size
    try:
        done = colibri_verify("--db", path, stderr=terminal)
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO once the terminal side is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(controller)
    shown = b"".join(chunks).decode(errors="replace")
    assert done.returncode == 0
    assert "verifying" in shown and "60.0k" in shown  # tqdm's bar, with the record count


def test_the_log_is_checked_against_its_calls_and_a_raw_edit_is_named_by_its_index(
    fresh_db: Database,
) -> None:
    """A store holding only calls (the switchboard's audit store) verifies its log too (SPEC §15)."""
    from colibri.checkpointing import adopt
    from colibri.domains.log.api import log_action
    from colibri.storage.audit_log import FinishedCall, insert_finished

    adopt(fresh_db)  # the log has begun, as any program that keeps it begins it
    with fresh_db.atomic() as conn:
        for n in range(5):
            row = FinishedCall(f"c{n}", "git.commit", '{"sha256":"00"}', "ok", "ab" * 32, "t", 1.5, "ci")
            insert_finished(conn, row, log_action)
    path = str(fresh_db.path)
    intact = colibri_verify("--db", path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE actions SET principal = 'mallory' WHERE correlation_id = 'c3'")
    conn.close()
    edited = colibri_verify("--db", path)
    assert intact.returncode == 0 and "log entries:      5 checked" in intact.stdout
    assert edited.returncode == 1
    assert "log difference:   entry index 3:" in edited.stdout and "BROKEN" in edited.stdout
