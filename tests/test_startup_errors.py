"""Start-up errors are one line (SPEC §14): a line naming the problem and the fix, no traceback,
exit 2 for configuration, and nothing left behind by a refused start."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.domains.log.helpers import generate_key
from tests.helpers import clean_env, colibri

URL = "postgresql://colibri@127.0.0.1:1/colibri"


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.parametrize("command", [["serve"], ["call", "server_health"], ["tools"], ["verify"]])
def test_a_url_in_colibri_db_path_points_at_colibri_db_url(tmp_path: Path, command: list[str]) -> None:
    """Taken as a file name, the URL used to become a SQLite file `postgresql:/...` in the working
    folder, and the server served from it as if all were well."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = clean_env(tmp_path, COLIBRI_DB_PATH=URL)
    done = colibri(*command, env=env, cwd=workdir)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "COLIBRI_DB_PATH" in line and "COLIBRI_DB_URL" in line
    assert list(workdir.iterdir()) == [], "a refused start makes no file"


def test_call_refuses_what_its_server_would_refuse_in_one_line(tmp_path: Path) -> None:
    """PostgreSQL without a signing key: the server `call` starts would refuse to boot, and `call`
    printed the SDK's 80-line 'Connection closed' traceback after the server's own line."""
    done = colibri(
        "call", "server_health", env=clean_env(tmp_path, COLIBRI_DB_URL=URL, COLIBRI_SIGNING_KEY="")
    )
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith("colibri call: ") and "COLIBRI_SIGNING_KEY" in line
    assert done.stdout == ""


def test_call_reports_its_servers_refusal_in_one_line_with_its_exit_code(tmp_path: Path) -> None:
    """The server `call` starts refuses at boot (a signing key that did not sign the log): `call`
    says why in one line and exits 2 as the server did, where it printed a traceback."""
    env = clean_env(tmp_path)
    key_a, vkey_a = generate_key(tmp_path, env, "example.com/a")
    key_b, vkey_b = generate_key(tmp_path, env, "example.com/b")
    signed = colibri("call", "audit_session_start", "{}", env={**env, "COLIBRI_SIGNING_KEY": str(key_a)})
    assert signed.returncode == 0, signed.stderr  # its shutdown signed a checkpoint with key a

    done = colibri("call", "server_health", env={**env, "COLIBRI_SIGNING_KEY": str(key_b)})
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith("colibri call: the server ended before it answered: cannot start: ")
    assert vkey_a in line and vkey_b in line
    assert done.stdout == ""
