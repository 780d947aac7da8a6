"""Start-up refusals that only phase 2 or the store can find are still exit 2 and one line (SPEC §14),
however short the session: a signing key that did not sign the log's latest checkpoint with stdin
already at its end (`colibri serve </dev/null`), and a `colibri ui` with no database to show."""

from __future__ import annotations

import re
import socket
from pathlib import Path

from tests.domains.log.helpers import generate_key
from tests.helpers import clean_env, colibri

# serving/logs.py's prefix before the message.
LOG_PREFIX = re.compile(r"^\d{4}-\d\d-\d\d [\d:,]+ [A-Z]+ [\w.]+: ")


def _messages(stderr: str) -> list[str]:
    return [LOG_PREFIX.sub("", line) for line in stderr.splitlines() if line.strip()]


def test_serve_with_stdin_at_its_end_refuses_a_key_that_did_not_sign_the_log(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    key_a, vkey_a = generate_key(tmp_path, env, "example.com/a")
    key_b, vkey_b = generate_key(tmp_path, env, "example.com/b")
    signed = colibri("call", "audit_session_start", "{}", env={**env, "COLIBRI_SIGNING_KEY": str(key_a)})
    assert signed.returncode == 0, signed.stderr  # its shutdown signed a checkpoint with key a
    other_key = {**env, "COLIBRI_SIGNING_KEY": str(key_b)}

    served = colibri("serve", env=other_key)  # stdin is /dev/null: EOF before any request
    called = colibri("call", "server_health", env=other_key)

    assert served.returncode == 2, served.stderr
    assert served.stdout == "" and "Traceback" not in served.stderr
    refusal = _messages(served.stderr)[-1]
    assert refusal.startswith("cannot start: ") and vkey_a in refusal and vkey_b in refusal
    assert called.returncode == 2
    assert called.stderr.strip() == f"colibri call: the server ended before it answered: {refusal}"


def test_ui_on_a_missing_database_is_a_configuration_error(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    missing = tmp_path / "nothing-here.db"
    done = colibri("ui", "--http", f"127.0.0.1:{port}", env=clean_env(tmp_path, COLIBRI_DB_PATH=str(missing)))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"colibri ui: COLIBRI_DB_PATH={missing} names no database (no such file); point it at a Colibri "
        "database file, or create one by running `colibri serve` once in FULL\n"
    )
    assert not missing.exists()
