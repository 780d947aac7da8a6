"""The `colibri` command: help everywhere, exit codes, one-shot calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from colibri.cli import build_parser
from tests.helpers import clean_env

COMMANDS = ["serve", "token", "tools", "call", "verify", "switchboard", "ui"]


def _colibri(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "colibri", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


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
