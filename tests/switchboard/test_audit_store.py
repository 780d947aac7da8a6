"""The audit store's bad days (SPEC §15): a store that cannot be written or is locked at start stops
the switchboard with exit 2 and one line naming it; a signing key that did not sign the store's log
does too; and at run time a call whose row cannot be written is refused (HANDLER_ERROR, retryable)
and never forwarded — the gateway does not act unrecorded — until the store takes writes again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.domains.log.helpers import generate_key
from tests.helpers import clean_env
from tests.switchboard.audit_helpers import Raw, calls
from tests.switchboard.helpers import FAST, Downstreams, switchboard_command, switchboard_env, write_config

HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
"""


@contextmanager
def write_lock_held(store: Path) -> Iterator[None]:
    """Another process holding the store's write lock until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.communicate(timeout=20)


def start(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        switchboard_command(config),
        env=switchboard_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _a_file_where_its_folder_goes(folder: Path) -> None:
    (folder / "taken").write_text("a file, not a folder")


def _no_database_in_its_place(folder: Path) -> None:
    (folder / "taken").mkdir()
    (folder / "taken" / "gateway.db").write_text("not SQLite at all " * 100)


@pytest.mark.parametrize(
    ("prepare", "expected"),
    [(_a_file_where_its_folder_goes, "cannot open database"), (_no_database_in_its_place, "not a database")],
)
def test_a_store_that_cannot_be_used_at_start_exits_2_naming_it(
    tmp_path: Path, prepare: Callable[[Path], None], expected: str
) -> None:
    prepare(tmp_path)
    config = write_config(tmp_path, {"s": {"command": "x"}}, audit={"db": "taken/gateway.db"})
    done = start(config)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"colibri switchboard: audit store {tmp_path / 'taken' / 'gateway.db'}: ")
    assert expected in line


def test_a_store_locked_at_start_exits_2_naming_it(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"s": {"command": "x"}}, audit={"db": "gateway.db"})
    store = tmp_path / "gateway.db"
    with write_lock_held(store):
        done = start(config)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"colibri switchboard: audit store {store}: it is locked by another process")


def test_a_key_that_did_not_sign_the_log_exits_2_naming_both(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path, {"echo": downstreams.fault("echo")}, health=FAST, audit={"db": "gateway.db"}
    )
    raw = Raw(config)
    raw.wait_for("echo", "HEALTHY")
    raw.close()  # its shutdown checkpoint is signed by colibri.key beside the store
    other, _ = generate_key(tmp_path, clean_env(tmp_path), "someone-else")
    data = json.loads(config.read_text())
    data["audit"]["signing_key"] = str(other)
    config.write_text(json.dumps(data))
    done = start(config)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "is not the key that signed the log's latest checkpoint" in line and "someone-else" in line


@pytest.mark.slow
def test_a_call_whose_row_cannot_be_written_is_refused_and_never_forwarded(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path, {"echo": downstreams.fault("echo")}, health=FAST, audit={"db": "gateway.db"}
    )
    store = tmp_path / "gateway.db"
    raw = Raw(config)
    try:
        raw.wait_for("echo", "HEALTHY")
        before = raw.call("echo.work", {"value": "before"})
        with write_lock_held(store):  # longer than the store's 10 s busy timeout
            refused = raw.call("echo.work", {"value": "while locked"})
        after = raw.call("echo.work", {"value": "after"})
    finally:
        raw.close()
    envelope = json.loads(refused["content"][0]["text"])
    assert refused["isError"] and envelope["error"]["code"] == "HANDLER_ERROR"
    assert envelope["error"]["details"].get("retryable") is True, envelope
    assert "nothing was forwarded" in envelope["error"]["message"]
    assert not before.get("isError") and not after.get("isError")
    assert downstreams.calls("echo") == 2  # the refused call never reached the server
    assert [row["outcome"] for row in calls(store)] == ["ok", "ok"]
