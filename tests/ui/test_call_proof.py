"""A call opened to its proof, on both backends: its log index however the calls finished, its
entry as stored, the proof against the latest checkpoint with its cosignatures, the trace id."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from colibri.core.clock import utc_now
from colibri.domains.log import cosigned, locate
from colibri.domains.log.appends import log_action
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import Signer
from colibri.domains.proofs import sessions
from colibri.domains.trail import records
from colibri.storage import Database
from colibri.storage.audit_read import get_action
from colibri.ui import audit_views
from colibri.ui.render import render
from tests.ui.offline_proof import check_call_proof, cosignature_names

STARTED: dict[int, float] = {}


def _open(db: Database, tool: str, principal: str = "ana") -> int:
    """A call begins: its row is written `running`, as the audit writer does at audit-enter."""
    row = db.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, started_at, principal)"
        " VALUES (?, ?, ?, 'running', ?, ?) RETURNING sequence_no",
        (f"c-{time.monotonic_ns()}", tool, '{"path": "/srv/app"}', utc_now(), principal),
    ).fetchone()
    STARTED[int(row[0])] = time.monotonic()
    return int(row[0])


def _finish(db: Database, number: int) -> int:
    """The call ends: its row is closed and logged in one transaction, as at audit-exit."""
    duration_ms = (time.monotonic() - STARTED[number]) * 1000
    with db.atomic() as conn:
        row = conn.execute(
            "UPDATE actions SET outcome = 'ok', result_hash = ?, duration_ms = ? WHERE sequence_no = ?"
            " RETURNING correlation_id, tool, arguments, started_at, principal",
            ("ab" * 32, duration_ms, number),
        ).fetchone()
        return log_action(conn, number, row[0], row[1], row[2], "ok", "ab" * 32, row[3], duration_ms, row[4])


def _records(db: Database, session_id: str, count: int) -> None:
    for n in range(count):
        records.append(db, session_id, "plan", f"step {n}")


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(locate, "FIRST_WINDOW", 2)  # so a few dozen entries need the windows to grow


@pytest.mark.usefixtures("small_windows")
def test_a_call_is_found_in_the_log_however_the_calls_finished(fresh_db: Database) -> None:
    session = sessions.start(fresh_db, None).session_id
    long_call = _open(fresh_db, "github.create_issue")
    logged: dict[int, int] = {}
    for _ in range(30):
        quick = _open(fresh_db, "fs.read_file")
        _records(fresh_db, session, 2)
        logged[quick] = _finish(fresh_db, quick)
    logged[long_call] = _finish(fresh_db, long_call)  # began first, finished last
    still_running = _open(fresh_db, "shell.run")
    with fresh_db.snapshot() as conn:
        for number, index in logged.items():
            action = get_action(conn, number)
            assert action is not None
            finished = locate.finished(action.started_at, action.duration_ms)
            assert locate.action_index(conn, number, finished) == index, number
        assert locate.action_index(conn, still_running, datetime.now(UTC)) is None
    # Times that mislead (an altered started_at) only make the search wider, never wrong.
    fresh_db.execute(
        "UPDATE actions SET started_at = '1999-01-01T00:00:00Z' WHERE sequence_no = ?", (long_call,)
    )
    with fresh_db.snapshot() as conn:
        assert locate.action_index(conn, long_call, datetime(1999, 1, 1, tzinfo=UTC)) == logged[long_call]
        assert locate.action_index(conn, long_call, None) == logged[long_call]


def test_the_page_and_the_proof_of_a_switchboard_call(fresh_db: Database) -> None:
    """A gateway's audit store names tools `server.tool`; its calls open and prove like any other."""
    number = _open(fresh_db, "github.create_issue", principal="ci-bot")
    _finish(fresh_db, number)
    signer = Signer.generate("example.com/colibri")
    with fresh_db.atomic() as conn:
        made = Notary(signer).make(conn, "on-demand")
        assert made.id is not None
        cosigned.add_cosignature(conn, made.id, "w1-key", "\u2014 w1.example AAAA\n", 1_700_000_000)
    page = audit_views.call_page(fresh_db, number, signer.verifier())
    assert page is not None and page["proof"].proof_ok and page["proof"].row_matches
    html = render("call.html", **page).body.decode()
    assert "github.create_issue" in html and 'id="proof-download"' in html
    assert '<span id="witnesses">cosigned by w1.example</span>' in html
    assert 'id="call-trace"' not in html  # this call carried no trace context
    bundle = audit_views.proof_bundle(fresh_db, number, signer.verifier())
    assert isinstance(bundle, dict)
    assert check_call_proof(bundle, signer.verifier().key()) == []
    assert cosignature_names(bundle) == ["example.com/colibri", "w1.example"]
    assert audit_views.call_page(fresh_db, number + 1, None) is None


def test_a_call_after_the_latest_checkpoint_or_still_running_has_no_proof_yet(fresh_db: Database) -> None:
    first = _open(fresh_db, "fs.read_file")
    _finish(fresh_db, first)
    with fresh_db.atomic() as conn:
        Notary(Signer.generate("example.com/colibri")).make(conn, "on-demand")
    later = _open(fresh_db, "fs.read_file")
    _finish(fresh_db, later)
    running = _open(fresh_db, "fs.write_file")
    assert "the next checkpoint will cover it" in str(audit_views.proof_bundle(fresh_db, later, None))
    assert "has not finished" in str(audit_views.proof_bundle(fresh_db, running, None))
    page = audit_views.call_page(fresh_db, first, None)
    assert page is not None and page["proof"].checkpoint.signature_ok is True  # the key the store records


def test_a_row_altered_after_it_was_logged_is_shown_as_such(fresh_db: Database) -> None:
    number = _open(fresh_db, "fs.read_file")
    _finish(fresh_db, number)
    with fresh_db.atomic() as conn:
        Notary(Signer.generate("example.com/colibri")).make(conn, "on-demand")
    fresh_db.execute("UPDATE actions SET principal = 'someone-else' WHERE sequence_no = ?", (number,))
    page = audit_views.call_page(fresh_db, number, None)
    assert page is not None
    assert page["proof"].row_matches is False and page["proof"].proof_ok is True
    assert "it was altered after the call was logged" in render("call.html", **page).body.decode()
    bundle = audit_views.proof_bundle(fresh_db, number, None)
    assert isinstance(bundle, dict)
    assert check_call_proof(bundle, page["verifier_key"]) == [
        "entry_hash is not the SHA-256 of the entry's JCS bytes"
    ]


def test_the_trace_id_is_shown_when_the_call_carried_one(fresh_db: Database) -> None:
    number = _open(fresh_db, "fs.read_file")
    _finish(fresh_db, number)
    fresh_db.execute(
        "UPDATE actions SET trace_id = ? WHERE sequence_no = ?", ("4bf92f3577b34da6a3ce929d0e0e4736", number)
    )
    page = audit_views.call_page(fresh_db, number, None)
    assert page is not None and page["action"].trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert 'id="call-trace"' in render("call.html", **page).body.decode()
