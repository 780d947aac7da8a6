"""Tamper detection, as a property: whatever single change is made directly in SQLite — one
byte of one field of one record, a deleted record, two records swapped, a record rewritten
with a fresh hash — `audit_verify_chain`'s check and `colibri verify` name the right seq and
reason, every time."""

from __future__ import annotations

import re
import shutil
import sqlite3
import struct
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colibri.domains.trail.canonical import record_hash
from colibri.domains.trail.verify import verify
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from colibri.verifier.offline import run_verify
from tests.domains.trail.helpers import build_chain, insert_task, raw_connection

RECORDS = 40
TEXT_FIELDS = ("session_id", "kind", "content", "task_id", "agent_id", "created_at", "prev_hash", "hash")
_SUMMARY = re.compile(r"^first break:\s+seq (\d+): (\w+) ", re.MULTILINE)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A chain of RECORDS records over three sessions (one sealed), some citing a task."""
    path = tmp_path_factory.mktemp("tamper") / "template.db"
    db = SQLiteDatabase.open(path)
    migrate(db, MIGRATIONS)
    insert_task(db, "T-1")
    ids = build_chain(db, RECORDS - 5, session_count=3)
    from colibri.domains.trail import records

    for i in range(5):
        records.append(db, ids[i % 2], "writeback", f"result {i}", task_id="T-1", agent_id="agent-\u00e9")
    from colibri.domains.proofs import sessions

    sessions.finalize(db, ids[2])
    db.close()
    return path


def flip_byte(conn: sqlite3.Connection, seq: int, column: str, position: int, mask: int) -> tuple[int, str]:
    """XOR one byte of one stored field; returns the (seq, reason) the verifier must report."""
    if column == "seq":
        # One of bytes 1..6 of the 64-bit value: the seq moves past every existing one and
        # stays positive, so the record is missing from its place in the chain.
        packed = bytearray(struct.pack(">q", seq))
        packed[7 - (1 + position % 6)] ^= mask
        conn.execute(
            "UPDATE thought_records SET seq = ? WHERE seq = ?", (struct.unpack(">q", packed)[0], seq)
        )
        return seq, "seq_gap"
    raw = bytearray(
        conn.execute(f"SELECT CAST({column} AS BLOB) FROM thought_records WHERE seq = ?", (seq,)).fetchone()[
            0
        ]
    )
    raw[position % len(raw)] ^= mask
    conn.execute(f"UPDATE thought_records SET {column} = CAST(? AS TEXT) WHERE seq = ?", (bytes(raw), seq))
    return seq, "hash_mismatch"


def swap(conn: sqlite3.Connection, first: int, second: int) -> tuple[int, str]:
    """Exchange two records' contents (each keeps its seq): the earlier one is found first."""
    columns = ", ".join(TEXT_FIELDS)
    rows = {
        seq: conn.execute(f"SELECT {columns} FROM thought_records WHERE seq = ?", (seq,)).fetchone()
        for seq in (first, second)
    }
    assignments = ", ".join(f"{column} = ?" for column in TEXT_FIELDS)
    conn.execute("UPDATE thought_records SET hash = 'moving' WHERE seq = ?", (second,))  # record_id is unique
    conn.execute(f"UPDATE thought_records SET {assignments} WHERE seq = ?", (*rows[second], first))
    conn.execute(f"UPDATE thought_records SET {assignments} WHERE seq = ?", (*rows[first], second))
    return min(first, second), "hash_mismatch"


def rewrite(conn: sqlite3.Connection, seq: int) -> tuple[int, str]:
    """Change a record's content and give it a correct new hash, as a careful forger would."""
    row = conn.execute(
        "SELECT session_id, kind, task_id, agent_id, created_at, prev_hash"
        " FROM thought_records WHERE seq = ?",
        (seq,),
    ).fetchone()
    keys = ("session_id", "kind", "task_id", "agent_id", "created_at", "prev_hash")
    forged = record_hash(
        seq=seq, content="what really happened, honestly", **dict(zip(keys, row, strict=True))
    )
    conn.execute(
        "UPDATE thought_records SET content = 'what really happened, honestly', hash = ? WHERE seq = ?",
        (forged, seq),
    )
    # Its successor's prev_hash no longer matches; the newest record is caught by the anchor.
    return (seq + 1, "prev_link_mismatch") if seq < RECORDS else (seq, "hash_mismatch")


TAMPERING = st.one_of(
    st.tuples(
        st.just("byte"),
        st.integers(1, RECORDS),
        st.sampled_from(("seq", *TEXT_FIELDS)),
        st.integers(0, 10_000),
        st.integers(1, 255),
    ),
    st.tuples(st.just("delete"), st.integers(1, RECORDS)),
    st.tuples(st.just("swap"), st.integers(1, RECORDS), st.integers(1, RECORDS)).filter(
        lambda t: t[1] != t[2]
    ),
    st.tuples(st.just("rewrite"), st.integers(1, RECORDS)),
)


def tamper(conn: sqlite3.Connection, action: tuple[Any, ...]) -> tuple[int, str]:
    kind, seq, *rest = action
    if kind == "byte":
        column, position, mask = rest
        if column != "seq":
            value = conn.execute(f"SELECT {column} FROM thought_records WHERE seq = ?", (seq,)).fetchone()[0]
            column = column if value is not None else "content"  # a null field has no byte to change
        return flip_byte(conn, seq, column, position, mask)
    if kind == "delete":
        conn.execute("DELETE FROM thought_records WHERE seq = ?", (seq,))
        return seq, "seq_gap"
    if kind == "swap":
        return swap(conn, seq, rest[0])
    return rewrite(conn, seq)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(action=TAMPERING, pick=st.integers(0, 2))
def test_every_single_change_is_reported_at_its_seq_with_its_reason(
    action: tuple[Any, ...], pick: int, template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whole chain and the scope of one random session (sealed or open, holding the changed
    record or not): a session's records are linked through the whole chain, so both see it."""
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "tampered.db"  # fresh per example: no stale -wal
    shutil.copyfile(template, path)
    conn = raw_connection(path)
    session_id = conn.execute("SELECT session_id FROM audit_sessions ORDER BY rowid").fetchall()[pick][0]
    expected = tamper(conn, action)
    conn.close()

    for scope in (None, session_id):
        db = SQLiteDatabase.open(path, readonly=True)
        try:
            report = verify(db, session_id=scope)
        finally:
            db.close()
        assert report.first_break is not None, (action, scope)
        assert (report.first_break.seq, report.first_break.reason) == expected, (action, scope)

        capsys.readouterr()
        assert run_verify(str(path), scope) == 1
        found = _SUMMARY.search(capsys.readouterr().out)
        assert found is not None and (int(found.group(1)), found.group(2)) == expected, (action, scope)


def test_the_untouched_template_verifies(template: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = SQLiteDatabase.open(template, readonly=True)
    try:
        assert verify(db).valid
    finally:
        db.close()
    assert run_verify(str(template), None) == 0
    assert "first break:      none" in capsys.readouterr().out
    conn = raw_connection(template)
    sessions = conn.execute("SELECT session_id FROM audit_sessions").fetchall()
    conn.close()
    assert len(sessions) == 3
    for (session_id,) in sessions:
        assert run_verify(str(template), session_id) == 0
        assert "first break:      none" in capsys.readouterr().out
