"""The `colibri` command: help everywhere, exit codes, one-shot calls."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from colibri.cli import build_parser
from tests.helpers import clean_env, colibri
from tests.helpers import postgres as pg

COMMANDS = [
    "serve",
    "tools",
    "call",
    "verify",
    "switchboard",
    "token",
    "key",
    "checkpoint",
    "log",
    "prove",
    "db",
    "ui",
    "witness",
]


_colibri = partial(colibri, timeout=60)


def test_every_command_is_registered_with_help() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    assert sorted(subparsers.choices) == sorted(COMMANDS)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", [[], *[[c] for c in COMMANDS]])
def test_help_exits_0(tmp_path: Path, command: list[str]) -> None:
    result = _colibri(*command, "--help", env=clean_env(tmp_path))
    assert result.returncode == 0
    assert "usage: colibri" in result.stdout


def test_tools_lists_what_the_mode_admits(tmp_path: Path) -> None:
    result = _colibri("tools", env=clean_env(tmp_path, COLIBRI_MODE="MINIMAL"))
    assert result.returncode == 0
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == ["server_ping", "server_health"]


def test_call_prints_the_envelope_and_exits_0(tmp_path: Path) -> None:
    result = _colibri("call", "server_health", env=clean_env(tmp_path))
    assert result.returncode == 0, result.stderr
    envelope = json.loads(result.stdout)
    assert envelope["ok"] is True
    assert envelope["data"]["phase"] == "phase2", "a one-shot call sees the booted server"


def test_call_exits_1_on_an_error_envelope(tmp_path: Path) -> None:
    result = _colibri("call", "no_such_tool", "{}", env=clean_env(tmp_path))
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == "UNKNOWN_TOOL"


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]"])
def test_call_exits_2_on_bad_arguments(tmp_path: Path, arguments: str) -> None:
    result = _colibri("call", "server_ping", arguments, env=clean_env(tmp_path))
    assert result.returncode == 2
    assert "JSON" in result.stderr
    assert result.stdout == ""


def test_call_exits_2_on_bad_configuration(tmp_path: Path) -> None:
    result = _colibri("call", "server_ping", env=clean_env(tmp_path, COLIBRI_MODE="ADMIN"))
    assert result.returncode == 2
    assert "COLIBRI_MODE" in result.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [(["tools"], 0), (["call", "server_ping"], 0), (["call", "task_get", '{"task_id": "T-404"}'], 1)],
)
def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path, args: list[str], code: int) -> None:
    """`colibri tools | head -1`: the reader is gone before the output is written; nothing to report."""
    process = subprocess.Popen(
        [sys.executable, "-m", "colibri", *args],
        env=clean_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # like `head` that has read what it wanted and left
    with process.stderr:
        stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == code, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_token_commands_print_the_token_once_and_refuse_bad_requests(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    created = _colibri("token", "create", "alice", "--scope", "read", env=env)
    assert created.returncode == 0 and created.stdout.startswith("col_")
    listed = _colibri("token", "list", env=env)
    assert listed.returncode == 0 and "alice\tread\tactive" in listed.stdout
    assert created.stdout.strip() not in listed.stdout
    for args in (["create", "alice", "--scope", "write"], ["create", "bad name", "--scope", "read"]):
        refused = _colibri("token", *args, env=env)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert _colibri("token", "revoke", "nobody", env=env).returncode == 2
    assert _colibri("token", "create", "x", "--scope", "admin", env=env).returncode == 2


def test_token_messages_name_the_postgresql_store_without_its_password(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> None:
    url = postgres_server.new_database()
    # Trust authentication ignores the password; it is there to be hidden.
    with_password = url.replace("postgres@", "postgres:s3cret@")
    env = clean_env(tmp_path, COLIBRI_DB_URL=with_password)
    shown = url.rsplit("@", 1)[1]
    for args in (["create", "alice", "--scope", "read"], ["revoke", "alice"]):
        done = _colibri("token", *args, env=env)
        assert done.returncode == 0, done.stderr
        assert f"in postgresql://postgres@{shown}" in done.stderr
        assert "s3cret" not in done.stderr and "colibri.db" not in done.stderr
    closed = with_password.replace(f":{postgres_server.port}/", f":{_closed_port()}/")
    failed = _colibri("token", "list", env=clean_env(tmp_path, COLIBRI_DB_URL=closed))
    assert failed.returncode != 0
    assert "cannot open postgresql://postgres@127.0.0.1:" in failed.stderr
    assert "s3cret" not in failed.stderr and "colibri.db" not in failed.stderr


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_on_postgresql_refuses_to_start_without_a_named_signing_key(
    tmp_path: Path, postgres_server: pg.PostgresServer
) -> None:
    env = clean_env(tmp_path, COLIBRI_DB_URL=postgres_server.new_database())
    del env["COLIBRI_SIGNING_KEY"]
    work = tmp_path / "work"
    work.mkdir()
    refused = subprocess.run(
        [sys.executable, "-m", "colibri", "serve"],
        env=env,
        cwd=work,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == ""
    assert "COLIBRI_SIGNING_KEY" in refused.stderr and "colibri key generate" in refused.stderr
    assert not list(work.rglob("*.key"))  # no key made in the working folder's data/
