"""Process lifecycle: bad configuration, SIGTERM, EOF, kill -9 mid-call, READONLY byte-identity."""

from __future__ import annotations

import hashlib
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.helpers import clean_env, query
from tests.helpers.raw import RawSession


def _serve(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "colibri", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_invalid_mode_exits_2_naming_the_valid_modes(tmp_path: Path) -> None:
    result = _serve(clean_env(tmp_path, COLIBRI_MODE="ADMIN"))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    for word in ("COLIBRI_MODE", "ADMIN", "FULL", "READONLY", "TEST", "MINIMAL"):
        assert word in lines[0]


def test_invalid_log_level_exits_2(tmp_path: Path) -> None:
    result = _serve(clean_env(tmp_path, COLIBRI_LOG_LEVEL="chatty"))
    assert result.returncode == 2
    assert "COLIBRI_LOG_LEVEL" in result.stderr and "debug" in result.stderr


def _integrity(db: Path) -> str:
    return str(query(db, "PRAGMA integrity_check")[0][0])


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_exits_0_with_a_sound_database(tmp_path: Path, signum: signal.Signals) -> None:
    session = RawSession(clean_env(tmp_path))
    session.initialize()
    for _ in range(20):
        assert session.call_tool("server_ping", {})["result"]["isError"] is False
    session.proc.send_signal(signum)
    code, _, stderr = session.close()
    assert code == 0, stderr.decode()
    assert not (tmp_path / "colibri.db-wal").exists(), "a clean close checkpoints the WAL"
    assert _integrity(tmp_path / "colibri.db") == "ok"


def test_stdin_eof_exits_0(tmp_path: Path) -> None:
    session = RawSession(clean_env(tmp_path))
    session.initialize()
    session.call_tool("server_ping", {})
    code, _, stderr = session.close()
    assert code == 0, stderr.decode()
    assert _integrity(tmp_path / "colibri.db") == "ok"


def _actions(db: Path) -> list[tuple[str, str]]:
    return [
        (row["tool"], row["outcome"])
        for row in query(db, "SELECT tool, outcome FROM actions ORDER BY sequence_no")
    ]


def test_kill_9_mid_call_is_marked_interrupted_on_next_boot(tmp_path: Path) -> None:
    db = tmp_path / "colibri.db"
    first = RawSession(clean_env(tmp_path))
    first.initialize()
    first.call_tool("server_ping", {})
    # Make audit-exit's UPDATE take seconds (a cross join in a trigger), so the call is
    # certainly between its committed `running` row and its outcome when it is killed.
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("CREATE TABLE slow (n INTEGER)")
        conn.executemany("INSERT INTO slow VALUES (?)", [(i,) for i in range(600)])
        conn.execute(
            "CREATE TRIGGER slow_exit AFTER UPDATE ON actions BEGIN "
            "SELECT count(*) FROM slow a, slow b, slow c; END"
        )
    # A read tool: the system tools' rows are written whole after the answer, never `running`.
    first.send({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "task_list"}})
    deadline = time.monotonic() + 10
    while ("task_list", "running") not in _actions(db):
        assert time.monotonic() < deadline, "the call never started"
        time.sleep(0.01)
    first.proc.kill()
    first.close()
    assert _actions(db)[-1] == ("task_list", "running")
    query(db, "DROP TRIGGER slow_exit")

    second = RawSession(clean_env(tmp_path))
    second.initialize()
    second.request("tools/list")
    second.close()
    outcomes = _actions(db)
    assert outcomes[1] == ("task_list", "interrupted")
    assert "running" not in {outcome for _, outcome in outcomes}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_readonly_leaves_the_database_byte_identical(tmp_path: Path) -> None:
    db = tmp_path / "colibri.db"
    writer = RawSession(clean_env(tmp_path))
    writer.initialize()
    writer.call_tool("server_ping", {})
    assert writer.close()[0] == 0
    before = _sha256(db)

    reader = RawSession(clean_env(tmp_path, COLIBRI_MODE="READONLY", COLIBRI_LOG_LEVEL="debug"))
    reader.initialize()
    tools = [tool["name"] for tool in reader.request("tools/list")["result"]["tools"]]
    for name in tools:
        reader.call_tool(name, {})
    for name in ("task_create", "thought_record", "audit_session_start", "merkle_finalize", "task_update"):
        refused = reader.call_tool(name, {"title": "x", "session_id": "s", "task_id": "T-1"})["result"]
        assert refused["structuredContent"]["error"]["code"] == "TOOL_NOT_ADMITTED"
        assert "READONLY" in refused["structuredContent"]["error"]["message"]
    code, _, stderr = reader.close()
    assert code == 0
    assert _sha256(db) == before
    assert "audit-denied task_create" in stderr.decode(), "denials go to the debug log in READONLY"
