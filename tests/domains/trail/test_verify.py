"""Chain verification: ranges, sessions, the anchored end, seals, and rows no one should see."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from colibri.core.errors import DomainError
from colibri.domains.proofs import sessions
from colibri.domains.trail import records
from colibri.domains.trail.canonical import record_hash, record_id_for
from colibri.domains.trail.verify import verify
from colibri.storage import Database
from tests.domains.trail.helpers import build_chain, raw_connection


def _break(db: Database, **scope: object) -> tuple[int, str] | None:
    report = verify(db, **scope)  # type: ignore[arg-type]
    brk = report.first_break
    return None if brk is None else (brk.seq, brk.reason)


def test_an_intact_chain_verifies_whole_by_range_and_by_session(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 40, session_count=3, seal=1)
    whole = verify(fresh_db)
    assert whole.valid and whole.checked == 40 and whole.first_break is None
    assert (
        whole.head_hash == fresh_db.execute("SELECT hash FROM thought_records WHERE seq = 40").fetchone()[0]
    )
    ranged = verify(fresh_db, from_seq=11, to_seq=20)
    assert ranged.valid and ranged.checked == 10
    assert verify(fresh_db, from_seq=35, to_seq=10_000).checked == 6
    # A session scope checks every record of the chain its records are linked into.
    sealed = verify(fresh_db, session_id=ids[0])
    assert sealed.valid and sealed.checked == 40 and len(sealed.seals) == 1 and sealed.seals[0].valid
    assert (
        sealed.head_hash == fresh_db.execute("SELECT hash FROM thought_records WHERE seq = 40").fetchone()[0]
    )
    open_session = verify(fresh_db, session_id=ids[1])
    assert open_session.valid and open_session.checked == 40 and open_session.seals == []
    assert (
        open_session.head_hash
        == fresh_db.execute("SELECT hash FROM thought_records WHERE seq = 38").fetchone()[0]
    )
    assert verify(fresh_db, session_id=ids[1], from_seq=11, to_seq=20).checked == 10
    assert verify(fresh_db, session_id=ids[0], from_seq=1, to_seq=10).seals == []


def test_an_empty_chain_is_valid_and_has_no_head(fresh_db: Database) -> None:
    report = verify(fresh_db)
    assert report.valid and report.checked == 0 and report.head_hash is None


def test_an_unknown_session_is_refused(fresh_db: Database) -> None:
    with pytest.raises(DomainError, match=r"^SESSION_NOT_FOUND: ghost "):
        verify(fresh_db, session_id="ghost")


def test_a_session_check_checks_the_global_chain_its_records_are_linked_into(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 30, session_count=3)  # ids[0] holds seqs 1, 4, 7, ...
    conn = raw_connection(fresh_db)
    conn.execute("UPDATE thought_records SET content = 'other session edited' WHERE seq = 5")
    for session_id in ids:  # seq 5 is ids[1]'s, but every session's links run through it
        assert _break(fresh_db, session_id=session_id) == (5, "hash_mismatch")
    assert _break(fresh_db, session_id=ids[0], from_seq=6) is None
    conn.execute("DELETE FROM thought_records WHERE seq = 9")  # ids[2]'s record, just before ids[0]'s 10
    assert _break(fresh_db, session_id=ids[0], from_seq=6) == (9, "seq_gap")
    assert _break(fresh_db) == (5, "hash_mismatch")
    conn.close()


def test_a_session_check_sees_what_only_the_session_s_neighbours_show(fresh_db: Database) -> None:
    """The reviewer's cases: a deleted record of an open session, a record moved out of the
    session by a changed session_id byte, a rewritten record whose successor is in another session."""
    sessions.start(fresh_db, "A")
    sessions.start(fresh_db, "B")
    for i in range(4):
        records.append(fresh_db, "AB"[i % 2], "observation", f"thought {i}")
    conn = raw_connection(fresh_db)
    conn.execute("DELETE FROM thought_records WHERE seq = 3")  # A's second record
    assert _break(fresh_db, session_id="A") == _break(fresh_db) == (3, "seq_gap")
    conn.close()

    records.append(fresh_db, "A", "observation", "thought 4")  # seq 5
    conn = raw_connection(fresh_db)
    conn.execute("UPDATE thought_records SET session_id = 'B' WHERE seq = 1")  # 'A' -> 'B': one byte
    assert _break(fresh_db, session_id="A", from_seq=1, to_seq=2) == (1, "hash_mismatch")
    conn.close()


def test_a_rewritten_record_is_found_through_its_successor_in_another_session(fresh_db: Database) -> None:
    sessions.start(fresh_db, "A")
    sessions.start(fresh_db, "B")
    for i in range(4):
        records.append(fresh_db, "AB"[i % 2], "observation", f"thought {i}")
    row = fresh_db.execute("SELECT * FROM thought_records WHERE seq = 3").fetchone()
    fields = ("session_id", "kind", "task_id", "agent_id", "created_at", "prev_hash")
    forged = record_hash(seq=3, content="forged", **{name: row[name] for name in fields})
    conn = raw_connection(fresh_db)
    conn.execute("UPDATE thought_records SET content = 'forged', hash = ? WHERE seq = 3", (forged,))
    conn.close()
    assert _break(fresh_db, session_id="A") == _break(fresh_db) == (4, "prev_link_mismatch")


def test_a_range_starting_after_a_hole_reports_the_hole(fresh_db: Database) -> None:
    build_chain(fresh_db, 20)
    conn = raw_connection(fresh_db)
    conn.execute("DELETE FROM thought_records WHERE seq = 9")
    conn.close()
    report = verify(fresh_db, from_seq=10, to_seq=15)
    assert report.first_break is not None
    assert (report.first_break.seq, report.first_break.reason, report.first_break.found) == (9, "seq_gap", 10)
    assert _break(fresh_db, from_seq=11) is None


def test_the_anchor_catches_a_deleted_newest_record(fresh_db: Database) -> None:
    build_chain(fresh_db, 10)
    conn = raw_connection(fresh_db)
    conn.execute("DELETE FROM thought_records WHERE seq = 10")
    conn.close()
    report = verify(fresh_db)
    assert report.first_break is not None
    assert (report.first_break.seq, report.first_break.reason) == (10, "seq_gap")
    assert (report.first_break.expected, report.first_break.found) == (10, None)


def test_the_anchor_catches_a_newest_record_rewritten_with_a_fresh_hash(fresh_db: Database) -> None:
    build_chain(fresh_db, 10)
    row = fresh_db.execute("SELECT * FROM thought_records WHERE seq = 10").fetchone()
    fields = {
        key: row[key]
        for key in ("seq", "session_id", "kind", "task_id", "agent_id", "created_at", "prev_hash")
    }
    forged = record_hash(**fields, content="rewritten, hash and all")
    conn = raw_connection(fresh_db)
    conn.execute(
        "UPDATE thought_records SET content = 'rewritten, hash and all', hash = ? WHERE seq = 10", (forged,)
    )
    conn.close()
    report = verify(fresh_db)
    assert report.first_break is not None
    assert (report.first_break.seq, report.first_break.reason) == (10, "hash_mismatch")
    assert (report.first_break.expected, report.first_break.found) == (row["hash"], forged)


def test_a_record_appended_behind_colibris_back_is_outside_the_anchor(fresh_db: Database) -> None:
    build_chain(fresh_db, 5)
    last = fresh_db.execute("SELECT * FROM thought_records WHERE seq = 5").fetchone()
    fields = {
        "seq": 6,
        "session_id": last["session_id"],
        "kind": "decision",
        "content": "smuggled",
        "task_id": None,
        "agent_id": None,
        "created_at": last["created_at"],
        "prev_hash": last["hash"],
    }
    conn = raw_connection(fresh_db)
    conn.execute(
        "INSERT INTO thought_records (seq, session_id, kind, content, task_id, agent_id, created_at,"
        " prev_hash, hash) VALUES (:seq, :session_id, :kind, :content, :task_id, :agent_id, :created_at,"
        " :prev_hash, :hash)",
        {**fields, "hash": record_hash(**fields)},
    )
    conn.close()
    report = verify(fresh_db)
    assert report.first_break is not None
    assert (report.first_break.seq, report.first_break.reason) == (6, "seq_gap")
    assert (report.first_break.expected, report.first_break.found) == (None, 6)
    assert verify(fresh_db, to_seq=5).valid


def test_a_rewritten_middle_record_breaks_the_next_link(fresh_db: Database) -> None:
    build_chain(fresh_db, 8)
    row = fresh_db.execute("SELECT * FROM thought_records WHERE seq = 4").fetchone()
    fields = {
        key: row[key]
        for key in ("seq", "session_id", "kind", "task_id", "agent_id", "created_at", "prev_hash")
    }
    forged = record_hash(**fields, content="a better story")
    conn = raw_connection(fresh_db)
    conn.execute("UPDATE thought_records SET content = 'a better story', hash = ? WHERE seq = 4", (forged,))
    conn.close()
    report = verify(fresh_db)
    assert report.first_break is not None
    assert (report.first_break.seq, report.first_break.reason) == (5, "prev_link_mismatch")
    assert (report.first_break.expected, report.first_break.found) == (forged, row["hash"])
    assert fresh_db.execute("SELECT record_id FROM thought_records WHERE seq = 4").fetchone()[
        0
    ] == record_id_for(forged)


def test_bytes_that_are_not_utf8_or_not_text_are_reported_not_fatal(fresh_db: Database) -> None:
    build_chain(fresh_db, 3000, session_count=2)
    conn = raw_connection(fresh_db)
    conn.execute(
        "UPDATE thought_records SET content = CAST(? AS TEXT) WHERE seq = 1500", (b"bad \xff\xfe bytes",)
    )
    conn.execute("UPDATE thought_records SET kind = ? WHERE seq = 2501", (b"plan",))  # a BLOB now
    conn.close()
    report = verify(fresh_db)
    assert report.checked == 3000 and report.breaks == 2
    assert report.first_break is not None and (report.first_break.seq, report.first_break.reason) == (
        1500,
        "hash_mismatch",
    )
    session = fresh_db.execute("SELECT session_id FROM thought_records WHERE seq = 2501").fetchone()[0]
    assert _break(fresh_db, session_id=session) == (1500, "hash_mismatch")
    assert _break(fresh_db, session_id=session, from_seq=1501) == (2501, "hash_mismatch")
    assert _break(fresh_db, from_seq=1501) == (2501, "hash_mismatch")


def test_a_seal_that_no_longer_matches_is_reported_beside_an_intact_chain(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 12, session_count=2, seal=1)
    conn = raw_connection(fresh_db)
    conn.execute("UPDATE session_seals SET root = ? WHERE session_id = ?", ("0" * 64, ids[0]))
    conn.close()
    report = verify(fresh_db, session_id=ids[0])
    assert report.first_break is None and not report.valid
    (seal,) = report.seals
    assert not seal.valid and seal.sealed_root == "0" * 64 and seal.computed_root != seal.sealed_root
    assert verify(fresh_db).valid  # the chain itself is intact


def test_verification_sees_one_snapshot_while_another_writer_appends(
    fresh_db: Database, open_store: Callable[..., Database]
) -> None:
    ids = build_chain(fresh_db, 50)
    other = open_store()
    with fresh_db.snapshot() as conn:
        before = conn.execute("SELECT count(*) FROM thought_records").fetchone()[0]
        records.append(other, ids[0], "plan", "written during verification")
        report = verify(conn)  # runs inside the open snapshot
    assert before == 50 and report.valid and report.checked == 50
    assert verify(fresh_db).checked == 51
