"""Calls answered outside the chain's lock are logged too (issues 10 and 13 together).

server_ping is answered on the event loop, and a call refused by the mode is decided there; both
rows are written later by the flusher, and each must reach the verifiable log in the flush's
transaction, like the row of any other finished call.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from colibri.core.modes import Mode
from colibri.core.state import ServerState
from colibri.domains.log.api import log_action
from colibri.storage import Database
from colibri.storage.audit_log import AuditLog
from tests.helpers import call, clean_env, connect, ok_data, query

pytestmark = pytest.mark.anyio


async def _wait_for_row(db: Path, tool: str, outcome: str) -> int:
    deadline = time.monotonic() + 5
    while True:
        rows = query(db, "SELECT sequence_no FROM actions WHERE tool = ? AND outcome = ?", (tool, outcome))
        if rows:
            return int(rows[0]["sequence_no"])
        assert time.monotonic() < deadline, f"no {outcome} row for {tool} while serving"
        await anyio.sleep(0.05)


async def test_a_ping_and_a_refused_call_are_log_entries_beside_their_rows(tmp_path: Path) -> None:
    db = tmp_path / "colibri.db"
    async with connect(clean_env(tmp_path)) as client:
        ok_data(await call(client, "server_ping"))
        ping = await _wait_for_row(db, "server_ping", "ok")
        report = ok_data(await call(client, "audit_verify_chain"))
    logged = {row["ref"] for row in query(db, "SELECT ref FROM log_entries WHERE kind = 'action'")}
    finished = {
        row["sequence_no"] for row in query(db, "SELECT sequence_no FROM actions WHERE outcome != 'running'")
    }
    assert ping in logged
    assert logged == finished, "every finished call, the inline ping included, is one log entry"
    assert report["valid"] is True and report["log"]["entries_match_rows"] is True


def test_a_denied_call_is_logged_when_its_row_is_flushed(fresh_db: Database) -> None:
    state = ServerState(version="t", declared_mode=Mode.TEST, phase="phase2", mode=Mode.TEST, db=fresh_db)
    audit = AuditLog(state, log_action)
    audit.denied("c0ffee", "task_create", "local")
    assert fresh_db.execute("SELECT count(*) FROM log_entries").fetchone()[0] == 0, "nothing before the flush"
    audit.flush_later()
    [row] = fresh_db.execute("SELECT sequence_no FROM actions WHERE outcome = 'denied'").fetchall()
    entries = fresh_db.execute("SELECT kind, ref FROM log_entries").fetchall()
    assert [tuple(entry) for entry in entries] == [("action", row[0])]
