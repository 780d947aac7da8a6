"""A call opened to its proof, on both backends: its log index however the calls finished, its
entry as stored, the proof against the latest checkpoint with its cosignatures, the trace id."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from colibri.core.clock import utc_now
from colibri.domains.log import locate
from colibri.domains.log.appends import log_action
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import Signer, Verifier
from colibri.domains.proofs import sessions
from colibri.domains.trail import records
from colibri.storage import Database, open_database
from colibri.storage.audit_read import get_action
from colibri.ui import audit_views
from colibri.ui.render import render
from tests.domains.log.helpers import generate_key
from tests.domains.log.witnesses import make_witness, running, write_policy
from tests.helpers import clean_env
from tests.helpers import postgres as pg
from tests.switchboard.helpers import FAST, Downstreams, switchboard, wait_for_state, write_config
from tests.ui.offline_proof import check_call_proof, cosignature_names

STARTED: dict[int, float] = {}
GATEWAY_ORIGIN = "example.com/gateway"
WITNESS_WAIT_S = 60.0


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


@pytest.mark.anyio
async def test_the_page_and_the_proof_of_a_switchboard_call(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """A gateway's audit store names tools `server.tool`; its calls open and prove like any other.
    A real switchboard routes a real call into its store and has its checkpoint cosigned by a real
    witness; the store's own log is what the page and the proof read."""
    env = clean_env(tmp_path)
    key, vkey = generate_key(tmp_path, env, GATEWAY_ORIGIN)
    witness = make_witness(tmp_path, env, "w1", [f"{GATEWAY_ORIGIN} {vkey}"])
    if backend == "sqlite":
        target, audit = str(tmp_path / "gateway.db"), {"db": "gateway.db", "signing_key": str(key)}
    else:
        server: pg.PostgresServer = request.getfixturevalue("postgres_server")
        target = server.new_database(migrated=False)
        audit = {"db_url": target, "signing_key": str(key)}
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"github": downstreams.fault("github")}, health=FAST, audit=audit)
    board_env = {
        "COLIBRI_LOG_ORIGIN": GATEWAY_ORIGIN,
        "COLIBRI_CHECKPOINT_INTERVAL_S": "0.2",
        "COLIBRI_WITNESS_POLICY": str(write_policy(tmp_path / "w.policy", [witness], 1)),
    }
    with running(witness):
        async with switchboard(config, env=board_env) as client:
            await wait_for_state(client, "github", "HEALTHY")
            routed = await client.call_tool("github.work", {"title": "t"})
            assert not routed.is_error, routed
            # The call's checkpoint is cosigned while the switchboard runs (the duty submits only
            # then); nothing is called meanwhile, so that checkpoint stays the latest.
            deadline = time.monotonic() + WITNESS_WAIT_S
            while (cosigned_at := _cosigned_and_latest(target, "github.work")) is None:
                assert time.monotonic() < deadline, "the witness did not cosign the call's checkpoint"
                await anyio.sleep(0.1)  # polling a condition while the switchboard runs
    number = cosigned_at
    verifier = Verifier.parse(vkey)
    db = open_database(target, readonly=True)
    try:
        page = audit_views.call_page(db, number, verifier)
        assert page is not None and page["proof"].proof_ok and page["proof"].row_matches
        html = render("call.html", **page).body.decode()
        assert "github.work" in html and 'id="proof-download"' in html
        assert '<span id="witnesses">cosigned by w1.example</span>' in html
        assert 'id="call-trace"' not in html  # this call carried no trace context
        bundle = audit_views.proof_bundle(db, number, verifier)
        assert isinstance(bundle, dict)
        assert check_call_proof(bundle, vkey) == []
        assert cosignature_names(bundle) == [GATEWAY_ORIGIN, "w1.example"]
        last = db.execute("SELECT max(sequence_no) FROM actions").fetchone()[0]
        assert audit_views.call_page(db, last + 1, None) is None
    finally:
        db.close()


def _cosigned_and_latest(target: str, tool: str) -> int | None:
    """The sequence number of `tool`'s row once the latest checkpoint covers its log entry and
    carries a cosignature; None before."""
    db = open_database(target, readonly=True)
    try:
        row = db.execute(
            "SELECT a.sequence_no, e.idx FROM actions a JOIN log_entries e"
            " ON e.kind = 'action' AND e.ref = a.sequence_no WHERE a.tool = ?",
            (tool,),
        ).fetchone()
        latest = db.execute(
            "SELECT c.size, (SELECT count(*) FROM log_cosignatures s WHERE s.checkpoint_id = c.id)"
            " FROM log_checkpoints c ORDER BY c.id DESC LIMIT 1"
        ).fetchone()
    finally:
        db.close()
    if row is None or latest is None or latest[0] <= row[1] or latest[1] == 0:
        return None
    return int(row[0])


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
