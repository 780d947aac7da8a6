"""`colibri checkpoint`, `log entries`, `prove inclusion`, `prove consistency`: the SPEC §11
shapes, proofs anyone can check with the checkpoint alone, and clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colibri.domains.log import rfc9162
from colibri.domains.log.checkpoint import open_checkpoint
from colibri.domains.log.note import Verifier
from colibri.domains.proofs import merkle
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.domains.log.helpers import generate_key
from tests.domains.trail.helpers import build_chain
from tests.helpers import clean_env, colibri, query

RECORDS = 37


@pytest.fixture
def logged(tmp_path: Path) -> tuple[dict[str, str], str]:
    """A database of RECORDS logged records, and an environment whose signing key is known."""
    env = clean_env(tmp_path)
    key_file, verifier_key = generate_key(tmp_path, env)
    env["COLIBRI_SIGNING_KEY"] = str(key_file)
    db = SQLiteDatabase.open(tmp_path / "colibri.db")
    migrate(db, MIGRATIONS)
    build_chain(db, RECORDS)
    db.close()
    return env, verifier_key


def test_checkpoint_signs_when_the_log_grew_and_repeats_itself_otherwise(
    logged: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, verifier_key = logged
    first = colibri("checkpoint", env=env)
    assert first.returncode == 0, first.stderr
    checkpoint = open_checkpoint(first.stdout, Verifier.parse(verifier_key))
    assert checkpoint.size == RECORDS
    again = colibri("checkpoint", env=env)
    assert again.stdout == first.stdout
    assert len(query(tmp_path / "colibri.db", "SELECT id FROM log_checkpoints")) == 1


def test_checkpoint_without_a_key_says_where_it_looked(
    logged: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, _ = logged
    env.pop("COLIBRI_SIGNING_KEY")
    done = colibri("checkpoint", env=env)
    assert done.returncode == 2
    assert "COLIBRI_SIGNING_KEY" in done.stderr and str(tmp_path / "colibri.key") in done.stderr


def test_entries_and_proofs_check_against_the_checkpoint_alone(logged: tuple[dict[str, str], str]) -> None:
    env, verifier_key = logged
    checkpoint = open_checkpoint(colibri("checkpoint", env=env).stdout, Verifier.parse(verifier_key))
    entries = colibri("log", "entries", env=env).stdout.splitlines()
    assert len(entries) == RECORDS and all(len(e) == 64 and e == e.lower() for e in entries)
    assert colibri("log", "entries", "--from", "5", "--to", "7", env=env).stdout.splitlines() == entries[5:8]
    assert merkle.tree_root([bytes.fromhex(e) for e in entries]) == checkpoint.root

    for index in (0, 17, RECORDS - 1):
        done = colibri("prove", "inclusion", str(index), "--size", str(RECORDS), env=env)
        proof = json.loads(done.stdout)
        assert set(proof) == {"index", "size", "entry_hash", "audit_path"}
        assert proof["entry_hash"] == entries[index]
        path = [bytes.fromhex(node) for node in proof["audit_path"]]
        assert merkle.verify_inclusion(
            bytes.fromhex(proof["entry_hash"]), index, RECORDS, path, checkpoint.root
        )

    old_root = merkle.tree_root([bytes.fromhex(e) for e in entries[:11]])
    answer = json.loads(colibri("prove", "consistency", "11", str(RECORDS), env=env).stdout)
    assert answer["old_size"] == 11 and answer["new_size"] == RECORDS
    proof = [bytes.fromhex(node) for node in answer["proof"]]
    assert rfc9162.verify_consistency(11, RECORDS, old_root, checkpoint.root, proof)


@pytest.mark.parametrize(
    "args",
    [
        ("prove", "inclusion", "37", "--size", "37"),
        ("prove", "inclusion", "0", "--size", "38"),
        ("prove", "consistency", "5", "38"),
        ("prove", "consistency", "0", "5"),
        ("log", "entries", "--from", "40"),
    ],
)
def test_indexes_outside_the_log_are_usage_errors(
    logged: tuple[dict[str, str], str], args: tuple[str, ...]
) -> None:
    env, _ = logged
    done = colibri(*args, env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert "the log" in done.stderr


def test_verify_needs_both_checkpoint_and_key(logged: tuple[dict[str, str], str], tmp_path: Path) -> None:
    env, verifier_key = logged
    assert colibri("verify", "--key", verifier_key, env=env).returncode == 2
    missing = colibri("verify", "--checkpoint", str(tmp_path / "none"), "--key", verifier_key, env=env)
    assert missing.returncode == 2 and "cannot read checkpoint file" in missing.stderr
    note = tmp_path / "cp"
    note.write_text(colibri("checkpoint", env=env).stdout)
    bad_key = colibri("verify", "--checkpoint", str(note), "--key", "not-a-key", env=env)
    assert bad_key.returncode == 2 and "NAME+HASH+KEY" in bad_key.stderr
    key_file = tmp_path / "verifier.pub"
    key_file.write_text(verifier_key + "\n")
    assert colibri("verify", "--checkpoint", str(note), "--key", str(key_file), env=env).returncode == 0
    foreign = colibri(
        "verify", "--checkpoint", str(note), "--key", verifier_key, env={**env, "COLIBRI_LOG_ORIGIN": "x"}
    )
    assert foreign.returncode == 1 and "COLIBRI_LOG_ORIGIN" in foreign.stdout


def test_a_database_without_a_log_is_refused(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    done = colibri("log", "entries", "--db", str(tmp_path / "missing.db"), env=env)
    assert done.returncode == 2 and "does not exist" in done.stderr
