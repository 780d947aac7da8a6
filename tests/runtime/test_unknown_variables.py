"""A `COLIBRI_*` variable that nothing reads (a typo such as COLIBRI_DBPATH) gets one warning line on
stderr naming the known variable it resembles; stdout is untouched. The known variables are listed
once (core/env.py), and that list is held to the names the source reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import colibri
from colibri.core.env import KNOWN_VARIABLES
from tests.helpers import clean_env
from tests.helpers import colibri as run_colibri

WARNING = (
    "colibri: warning: COLIBRI_DBPATH is not a Colibri variable and is ignored; did you mean COLIBRI_DB_PATH?"
)
SOURCE = Path(colibri.__file__).parent


def _lines_with_warning(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "COLIBRI_DBPATH" in line]


def test_a_misspelt_variable_is_one_warning_line_and_stdout_is_untouched(tmp_path: Path) -> None:
    plain = run_colibri("tools", env=clean_env(tmp_path))
    misspelt = run_colibri("tools", env=clean_env(tmp_path, COLIBRI_DBPATH="elsewhere.db"))
    assert misspelt.returncode == plain.returncode == 0
    assert misspelt.stdout == plain.stdout
    assert misspelt.stderr == WARNING + "\n"


@pytest.mark.parametrize("command", [("serve",), ("call", "server_health")], ids=" ".join)
def test_serve_and_call_warn_once(tmp_path: Path, command: tuple[str, ...]) -> None:
    done = run_colibri(*command, env=clean_env(tmp_path, COLIBRI_DBPATH="elsewhere.db"))
    assert done.returncode == 0, done.stderr
    assert _lines_with_warning(done.stderr) == [WARNING]
    if command[0] == "serve":
        assert done.stdout == ""  # stdout carries JSON-RPC only
    else:
        assert json.loads(done.stdout)["ok"] is True


def test_no_warning_for_the_variables_colibri_reads(tmp_path: Path) -> None:
    env = clean_env(tmp_path, COLIBRI_MODE="FULL", COLIBRI_LOG_LEVEL="warn", COLIBRI_HTTP_MAX_SESSIONS="9")
    done = run_colibri("tools", env=env)
    assert done.returncode == 0 and done.stderr == ""


def test_the_known_list_is_every_variable_the_source_reads() -> None:
    named = set()
    for path in SOURCE.rglob("*.py"):
        named |= set(re.findall(r"COLIBRI_[A-Z0-9_]*[A-Z0-9]", path.read_text()))
    # `COLIBRI_HTTP_*` in prose is a family, not a variable.
    named -= {"COLIBRI_HTTP"}
    assert named == KNOWN_VARIABLES
