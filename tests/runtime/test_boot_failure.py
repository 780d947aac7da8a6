"""A failed phase 2 leaves a server in MINIMAL + phase1 that keeps answering and says why on stderr."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import clean_env
from tests.helpers.raw import RawSession

CORRUPT = b"this is not a SQLite database, it is a text file that lost its way\n" * 64


def _directory(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "a-directory.db").mkdir()
    return clean_env(tmp_path, COLIBRI_DB_PATH=str(tmp_path / "a-directory.db"))


def _unwritable_folder(tmp_path: Path) -> dict[str, str]:
    # /proc refuses new files even to root, so this holds whoever runs the tests.
    return clean_env(tmp_path, COLIBRI_DB_PATH=f"/proc/colibri-{os.getpid()}/colibri.db")


def _corrupted_file(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "corrupt.db").write_bytes(CORRUPT)
    return clean_env(tmp_path, COLIBRI_DB_PATH=str(tmp_path / "corrupt.db"))


def _readonly_missing(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path, COLIBRI_MODE="READONLY", COLIBRI_DB_PATH=str(tmp_path / "missing.db"))


def _missing_signing_key(tmp_path: Path) -> dict[str, str]:
    return clean_env(tmp_path, COLIBRI_SIGNING_KEY=str(tmp_path / "no-such.key"))


def _malformed_signing_key(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "bad.key").write_text("PRIVATE+KEY+name+00000000+AAAA\n")
    return clean_env(tmp_path, COLIBRI_SIGNING_KEY=str(tmp_path / "bad.key"))


CASES = {
    "directory": (_directory, "is a directory"),
    "missing-signing-key": (_missing_signing_key, "cannot read signer key file"),
    "malformed-signing-key": (_malformed_signing_key, "does not hold a signer key"),
    "unwritable-folder": (_unwritable_folder, "cannot open database"),
    "corrupted-file": (_corrupted_file, "not a database"),
    "readonly-missing-file": (_readonly_missing, "open it once in FULL"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_boot_failure_falls_back_to_minimal_phase1(tmp_path: Path, case: str) -> None:
    make_env, reason = CASES[case]
    session = RawSession(make_env(tmp_path))
    try:
        session.initialize()  # returns once phase 2 is over, here failed
        listed = session.request("tools/list")["result"]["tools"]
        health = [session.call_tool("server_health", {})["result"]["structuredContent"] for _ in range(3)]
        refused = session.call_tool("task_list", {})["result"]
    finally:
        code, _, stderr = session.close()
    assert sorted(tool["name"] for tool in listed) == ["server_health", "server_ping"]
    for envelope in health:
        assert envelope["ok"] is True
        assert (envelope["data"]["mode"], envelope["data"]["phase"]) == ("MINIMAL", "phase1")
        assert envelope["data"]["db_tables"] == 0
    assert refused["isError"] is True
    assert refused["structuredContent"]["error"]["code"] == "TOOL_NOT_ADMITTED"
    assert "boot failed" in refused["structuredContent"]["error"]["message"]
    failure_lines = [line for line in stderr.decode().splitlines() if "boot failed" in line]
    assert len(failure_lines) == 1 and reason in failure_lines[0], stderr.decode()
    assert code == 0
    if case == "corrupted-file":
        assert (tmp_path / "corrupt.db").read_bytes() == CORRUPT, "a file we cannot read is left untouched"
