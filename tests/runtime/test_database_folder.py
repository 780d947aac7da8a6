"""A new SQLite file gets its own folder made, never a whole tree (SPEC §14's "missing database folder"):
the folder is created when the folder above it exists, so the default `data/colibri.db` works in any
working folder; otherwise the command exits 2 with one line naming the missing folder and the fix,
and creates nothing. Both programs: `colibri serve` (stdio and --http), `call`, `token`, and the
switchboard's audit store."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from tests.helpers import clean_env, colibri

REFUSING = [
    ("serve",),
    ("serve", "--http", "127.0.0.1:{port}"),
    ("call", "server_health"),
    ("token", "create", "alice", "--scope", "write"),
]

# A downstream that is never started: the store is opened (or refused) before any server is.
SERVERS = {"idle": {"command": "true", "disabled": True}}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("command", REFUSING, ids=" ".join)
def test_a_database_two_folders_deep_in_nothing_is_refused(tmp_path: Path, command: tuple[str, ...]) -> None:
    wanted = tmp_path / "a" / "b" / "c" / "x.db"
    args = [word.format(port=_free_port()) for word in command]
    done = colibri(*args, env=clean_env(tmp_path, COLIBRI_DB_PATH=str(wanted)), timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    folder = wanted.parent
    assert _one_line(done.stderr) == (
        f"colibri {command[0]}: COLIBRI_DB_PATH={wanted}: the folder {folder} does not exist, nor "
        f"{folder.parent} above it: create it first (mkdir -p {folder}), or point COLIBRI_DB_PATH at a "
        "file in an existing folder"
    )
    assert not (tmp_path / "a").exists(), "a refused start creates no folder"


def test_the_default_database_makes_its_own_folder_in_any_working_folder(tmp_path: Path) -> None:
    workdir = tmp_path / "project"
    workdir.mkdir()
    env = clean_env(tmp_path)
    del env["COLIBRI_DB_PATH"]
    done = colibri("call", "audit_session_start", "{}", env=env, cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert (workdir / "data" / "colibri.db").is_file()


def test_the_switchboards_audit_store_follows_the_same_rule(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("COLIBRI_")}
    refused_config = tmp_path / "refused.json"
    refused_config.write_text(json.dumps({"mcpServers": SERVERS, "audit": {"db": "nodir/deeper/a.db"}}))
    refused = colibri("switchboard", "--config", str(refused_config), env=env, timeout=60)
    assert refused.returncode == 2, refused.stderr
    wanted = tmp_path / "nodir" / "deeper" / "a.db"  # relative to the config file
    assert _one_line(refused.stderr) == (
        f"colibri switchboard: audit store {wanted}: the folder {wanted.parent} does not exist, nor "
        f"{wanted.parent.parent} above it: create it first (mkdir -p {wanted.parent}), or point the audit "
        'section\'s "db" at a file in an existing folder'
    )
    assert not (tmp_path / "nodir").exists() and not Path("nodir").exists()

    made_config = tmp_path / "made.json"
    made_config.write_text(json.dumps({"mcpServers": SERVERS, "audit": {"db": "own/a.db"}}))
    made = colibri("switchboard", "--config", str(made_config), env=env, timeout=60)  # stdin: EOF
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "own" / "a.db").is_file()


def test_any_command_creating_a_sqlite_file_follows_the_rule(tmp_path: Path) -> None:
    """The rule is the storage layer's, so a command with no check of its own (`db copy` here, `witness
    serve` alike) refuses the same way; the file's own folder alone is still made."""
    env = clean_env(tmp_path)
    made = colibri("call", "audit_session_start", "{}", env=env)
    assert made.returncode == 0, made.stderr
    source = env["COLIBRI_DB_PATH"]
    deep = tmp_path / "a" / "b" / "copy.db"
    refused = colibri("db", "copy", source, str(deep), env=env)
    assert refused.returncode == 2, refused.stderr
    assert _one_line(refused.stderr) == (
        f"colibri db copy: cannot create database {deep}: the folder {deep.parent} does not exist, nor "
        f"{deep.parent.parent} above it: create it first (mkdir -p {deep.parent}), or choose a file in an "
        "existing folder"
    )
    assert not (tmp_path / "a").exists()
    shallow = tmp_path / "copies" / "copy.db"
    copied = colibri("db", "copy", source, str(shallow), env=env)
    assert copied.returncode == 0, copied.stderr
    assert shallow.is_file()
