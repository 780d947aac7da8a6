"""Appending to the chain and listing records, on a real SQLite file."""

from __future__ import annotations

import pytest

from colibri.core.cursor import decode_cursor, encode_cursor
from colibri.core.errors import DomainError
from colibri.domains.proofs import sessions
from colibri.domains.trail import records
from colibri.domains.trail.canonical import GENESIS_HASH, record_hash
from colibri.domains.trail.repository import read_head
from colibri.storage import Database
from tests.domains.trail.helpers import KINDS, build_chain, insert_task


def test_records_chain_from_the_genesis_hash_across_sessions(fresh_db: Database) -> None:
    first = sessions.start(fresh_db, "s-1").session_id
    second = sessions.start(fresh_db, "s-2").session_id
    a = records.append(fresh_db, first, "plan", "one")
    b = records.append(fresh_db, second, "decision", "two", agent_id="agent-7")
    c = records.append(fresh_db, first, "observation", "three")
    assert (a.seq, b.seq, c.seq) == (1, 2, 3)
    assert a.prev_hash == GENESIS_HASH and b.prev_hash == a.hash and c.prev_hash == b.hash
    assert b.hash == record_hash(
        seq=2,
        session_id="s-2",
        kind="decision",
        content="two",
        task_id=None,
        agent_id="agent-7",
        created_at=b.created_at,
        prev_hash=a.hash,
    )
    assert b.record_id == "rec_" + b.hash[:24]
    head = read_head(fresh_db)
    assert (head.seq, head.hash) == (3, c.hash)
    stored = fresh_db.execute("SELECT record_id FROM thought_records WHERE seq = 2").fetchone()[0]
    assert stored == b.record_id  # the generated column computes the same id


def test_an_unknown_session_is_refused_and_nothing_is_written(fresh_db: Database) -> None:
    with pytest.raises(DomainError) as caught:
        records.append(fresh_db, "ghost", "plan", "x")
    assert caught.value.code == "SESSION_NOT_FOUND"
    assert str(caught.value).startswith("SESSION_NOT_FOUND: ghost ")
    assert "audit_session_start" in caught.value.message
    assert fresh_db.execute("SELECT count(*) FROM thought_records").fetchone()[0] == 0


def test_a_sealed_session_takes_no_more_records(fresh_db: Database) -> None:
    session = sessions.start(fresh_db, "s-1").session_id
    records.append(fresh_db, session, "plan", "x")
    sealed = sessions.finalize(fresh_db, session)
    with pytest.raises(DomainError) as caught:
        records.append(fresh_db, session, "plan", "late")
    assert str(caught.value).startswith("SESSION_FINALIZED: s-1 ")
    assert sealed.finalized_at in caught.value.message and "audit_session_start" in caught.value.message
    assert read_head(fresh_db).seq == 1


def test_a_cited_task_must_exist(fresh_db: Database) -> None:
    session = sessions.start(fresh_db, "s-1").session_id
    with pytest.raises(DomainError) as caught:
        records.append(fresh_db, session, "writeback", "done", task_id="T-404")
    assert str(caught.value).startswith("TASK_NOT_FOUND: T-404 ")
    assert "task_list" in caught.value.message
    insert_task(fresh_db, "T-1")
    record = records.append(fresh_db, session, "writeback", "done", task_id="T-1")
    assert (
        fresh_db.execute("SELECT task_id FROM thought_records WHERE seq = ?", (record.seq,)).fetchone()[0]
        == "T-1"
    )


def test_pages_follow_filters_and_cursors_oldest_first(fresh_db: Database) -> None:
    ids = build_chain(fresh_db, 30, session_count=2)
    insert_task(fresh_db, "T-1")
    cited = records.append(fresh_db, ids[0], "writeback", "cites", task_id="T-1")

    seen, cursor = [], None
    while True:
        page, cursor = records.page(fresh_db, session_id=ids[0], limit=4, cursor=cursor)
        seen += page
        if cursor is None:
            break
    assert [r.seq for r in seen] == sorted(r.seq for r in seen)
    assert {r.session_id for r in seen} == {ids[0]} and len(seen) == 16

    by_kind, cursor = records.page(fresh_db, kind="analysis", limit=200)
    assert cursor is None and by_kind and all(r.kind == "analysis" for r in by_kind)
    by_task, _ = records.page(fresh_db, task_id="T-1")
    assert [r.record_id for r in by_task] == [cited.record_id]
    both, _ = records.page(fresh_db, session_id=ids[1], kind=KINDS[1])
    assert all(r.session_id == ids[1] and r.kind == KINDS[1] for r in both)
    last_page, cursor = records.page(fresh_db, limit=31)
    assert len(last_page) == 31 and cursor is None


def test_listing_an_unknown_session_or_task_is_an_error_not_an_empty_page(fresh_db: Database) -> None:
    with pytest.raises(DomainError, match="SESSION_NOT_FOUND: nope "):
        records.page(fresh_db, session_id="nope")
    with pytest.raises(DomainError, match="TASK_NOT_FOUND: T-9 "):
        records.page(fresh_db, task_id="T-9")


def test_cursors_round_trip_and_foreign_ones_are_refused() -> None:
    assert decode_cursor(encode_cursor(12345)) == 12345
    for bad in ("", "abc", encode_cursor(1)[:-2] + "!!", "YWZ0ZXI6LTE", "YWZ0ZXI6MQ==x"):
        with pytest.raises(ValueError, match="next_cursor"):
            decode_cursor(bad)
