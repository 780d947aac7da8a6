"""Key continuity (SPEC §14, issue 23): a boot with a key other than the one that signed the latest
checkpoint exits 2 naming both verifier keys, on stdio and HTTP alike, unless `colibri key rotate`
recorded the handover; `verify --checkpoint` follows a chain of handovers and no forged one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from colibri.domains.log.continuity import KeyContinuityError
from colibri.domains.log.keys import read_signer
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import SIGNATURE_PREFIX, Signer, sign
from colibri.storage import open_database
from tests.domains.log.helpers import generate_key
from tests.domains.trail.helpers import build_chain
from tests.helpers import clean_env, colibri
from tests.http.helpers import free_port

BOOT_TIMEOUT_S = 60


def _serve_until_exit(env: dict[str, str], *args: str) -> tuple[int, str]:
    """Run `colibri serve` with its stdin held open (an EOF would end it anyway) until it exits."""
    process = subprocess.Popen(
        [sys.executable, "-m", "colibri", "serve", *args],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        code = process.wait(timeout=BOOT_TIMEOUT_S)
        assert process.stderr is not None
        return code, process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            assert stream is not None
            stream.close()


def _sign_once(env: dict[str, str]) -> None:
    """One call through a fresh server: its shutdown signs a checkpoint of the log."""
    done = colibri("call", "audit_session_start", json.dumps({"session_id": uuid.uuid4().hex}), env=env)
    assert done.returncode == 0, done.stderr


def _stored_keys(store: str) -> list[str | None]:
    db = open_database(store, readonly=True)
    try:
        return [row[0] for row in db.execute("SELECT verifier_key FROM log_checkpoints ORDER BY id")]
    finally:
        db.close()


def _store_of(env: dict[str, str]) -> str:
    return env.get("COLIBRI_DB_URL") or env["COLIBRI_DB_PATH"]


def test_a_boot_with_another_key_exits_2_naming_both_keys(
    backend_env: dict[str, str], tmp_path: Path
) -> None:
    key_a, vkey_a = generate_key(tmp_path, backend_env, "example.com/a")
    key_b, vkey_b = generate_key(tmp_path, backend_env, "example.com/b")
    _sign_once({**backend_env, "COLIBRI_SIGNING_KEY": str(key_a)})
    assert _stored_keys(_store_of(backend_env)) == [vkey_a]  # the column, on SQLite and PostgreSQL

    code, stderr = _serve_until_exit({**backend_env, "COLIBRI_SIGNING_KEY": str(key_b)})
    assert code == 2, stderr
    errors = [line for line in stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and vkey_a in errors[0] and vkey_b in errors[0], stderr
    assert "colibri key rotate" in errors[0] and "Traceback" not in stderr

    _sign_once({**backend_env, "COLIBRI_SIGNING_KEY": str(key_a)})  # the right key still boots


@pytest.mark.sqlite_only
def test_serve_http_exits_2_too(backend_env: dict[str, str], tmp_path: Path) -> None:
    key_a, vkey_a = generate_key(tmp_path, backend_env, "example.com/a")
    key_b, vkey_b = generate_key(tmp_path, backend_env, "example.com/b")
    _sign_once({**backend_env, "COLIBRI_SIGNING_KEY": str(key_a)})
    env = {**backend_env, "COLIBRI_SIGNING_KEY": str(key_b)}
    code, stderr = _serve_until_exit(env, "--http", f"127.0.0.1:{free_port()}", "--no-auth")
    assert code == 2, stderr
    assert vkey_a in stderr and vkey_b in stderr and "Traceback" not in stderr


def test_a_run_without_a_key_makes_none_when_the_log_is_signed(tmp_path: Path) -> None:
    """The trial's case: COLIBRI_SIGNING_KEY forgotten once. The run used to make a new colibri.key
    beside the database and sign on with it; now it exits 2 naming the key the log is signed by."""
    env = clean_env(tmp_path)
    key_a, vkey_a = generate_key(tmp_path, env, "example.com/a")
    _sign_once({**env, "COLIBRI_SIGNING_KEY": str(key_a)})
    code, stderr = _serve_until_exit(env)
    assert code == 2, stderr
    assert vkey_a in stderr and "COLIBRI_SIGNING_KEY is unset" in stderr
    assert not (tmp_path / "colibri.key").exists()


def test_a_log_without_checkpoints_accepts_any_key(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    db = open_database(tmp_path / "colibri.db")
    try:
        from colibri.storage.migrations import migrate
        from colibri.tools.catalog import MIGRATIONS

        migrate(db, MIGRATIONS)
        build_chain(db, 5)
    finally:
        db.close()
    key_b, vkey_b = generate_key(tmp_path, env, "example.com/b")
    _sign_once({**env, "COLIBRI_SIGNING_KEY": str(key_b)})
    assert _stored_keys(str(tmp_path / "colibri.db")) == [vkey_b]


def test_key_show_prints_the_verifier_key(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    key, vkey = generate_key(tmp_path, env)
    shown = colibri("key", "show", str(key), env=env)
    assert shown.returncode == 0 and shown.stdout == vkey + "\n"
    missing = colibri("key", "show", str(tmp_path / "nope.key"), env=env)
    assert missing.returncode == 2 and "nope.key" in missing.stderr and "Traceback" not in missing.stderr


def test_rotation_hands_the_log_over_and_verify_follows_the_chain(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    key_a, vkey_a = generate_key(tmp_path, env, "example.com/a")
    key_b, vkey_b = generate_key(tmp_path, env, "example.com/b")
    key_c, vkey_c = generate_key(tmp_path, env, "example.com/c")
    _sign_once({**env, "COLIBRI_SIGNING_KEY": str(key_a)})

    same = colibri("key", "rotate", "--from", str(key_a), "--to", str(key_a), env=env)
    assert same.returncode == 2 and "same key" in same.stderr
    wrong = colibri("key", "rotate", "--from", str(key_b), "--to", str(key_c), env=env)
    assert wrong.returncode == 2 and vkey_a in wrong.stderr and vkey_b in wrong.stderr

    rotated = colibri("key", "rotate", "--from", str(key_a), "--to", str(key_b), env=env)
    assert rotated.returncode == 0, rotated.stderr
    assert f"key-handover {vkey_b}\n" in rotated.stdout
    assert rotated.stdout.count(f"\n{SIGNATURE_PREFIX}") == 2  # signed by both keys
    code, stderr = _serve_until_exit({**env, "COLIBRI_SIGNING_KEY": str(key_a)})
    assert code == 2 and vkey_a in stderr and vkey_b in stderr, stderr
    _sign_once({**env, "COLIBRI_SIGNING_KEY": str(key_b)})
    assert colibri("key", "rotate", "--from", str(key_b), "--to", str(key_c), env=env).returncode == 0
    _sign_once({**env, "COLIBRI_SIGNING_KEY": str(key_c)})
    assert _stored_keys(str(tmp_path / "colibri.db"))[-1] == vkey_c

    latest = tmp_path / "latest.checkpoint"
    latest.write_text(colibri("checkpoint", env={**env, "COLIBRI_SIGNING_KEY": str(key_c)}).stdout)
    done = colibri("verify", "--checkpoint", str(latest), "--key", vkey_a, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"signed by {vkey_c}, handed over from the given key at size" in done.stdout
    assert colibri("verify", "--checkpoint", str(latest), "--key", vkey_c, env=env).returncode == 0


def test_a_forged_handover_is_not_followed(tmp_path: Path) -> None:
    """Anyone can append a signature line to a note the old key signed; without the old key's
    signature over a handover line naming the new key, verify does not follow it."""
    env = clean_env(tmp_path)
    key_a, vkey_a = generate_key(tmp_path, env, "example.com/a")
    _sign_once({**env, "COLIBRI_SIGNING_KEY": str(key_a)})
    forger = Signer.generate("example.com/a")  # even the same name
    db_path = tmp_path / "colibri.db"
    db = open_database(db_path)
    try:
        with db.atomic() as conn:
            note = conn.execute("SELECT note FROM log_checkpoints ORDER BY id DESC LIMIT 1").fetchone()[0]
            body = note.partition("\n\n")[0] + "\n"
            appended = note + sign(body, forger).partition("\n\n")[2]
            conn.execute("UPDATE log_checkpoints SET note = ?", (appended,))
            forged = sign(body, forger)
    finally:
        db.close()
    (tmp_path / "forged.checkpoint").write_text(forged)
    done = colibri("verify", "--checkpoint", str(tmp_path / "forged.checkpoint"), "--key", vkey_a, env=env)
    assert done.returncode == 1 and "REJECTED" in done.stdout, done.stdout


def test_a_server_whose_key_was_rotated_away_stops_signing(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    key_a, _ = generate_key(tmp_path, env, "example.com/a")
    key_b, vkey_b = generate_key(tmp_path, env, "example.com/b")
    _sign_once({**env, "COLIBRI_SIGNING_KEY": str(key_a)})
    db = open_database(tmp_path / "colibri.db")
    try:
        old, new = Notary(read_signer(key_a)), read_signer(key_b)
        with db.atomic() as conn:
            old.hand_over(conn, new)
        with pytest.raises(KeyContinuityError, match=re.escape(vkey_b)), db.atomic() as conn:
            old.make(conn, "interval")
        with db.atomic() as conn:
            assert Notary(new).make(conn, "interval").verifier_key == vkey_b
    finally:
        db.close()
