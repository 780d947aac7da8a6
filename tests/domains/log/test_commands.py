"""`colibri checkpoint`, `log entries`, `prove inclusion`, `prove consistency`: the SPEC §11
shapes, proofs anyone can check with the checkpoint alone, and clear refusals."""

from __future__ import annotations

import json
import re
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
from tests.domains.trail.helpers import build_chain, raw_connection
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

    single = colibri("prove", "inclusion", "17", env=env)
    assert single.returncode == 0 and single.stderr == "", single.stderr
    indexes = (0, 17, RECORDS - 1)
    done = colibri("prove", "inclusion", *map(str, indexes), "--size", str(RECORDS), "--timings", env=env)
    assert done.returncode == 0, done.stderr
    proofs = [json.loads(line) for line in done.stdout.splitlines()]
    assert proofs[1] == json.loads(single.stdout)
    # Each proof's own time, in the order given (SPEC §25: a proof's p99 through `colibri prove`).
    timed = [
        re.fullmatch(r"inclusion (\d+): (\d+\.\d{3}) ms \((\d+\.\d{3}) ms CPU\)", line)
        for line in done.stderr.splitlines()
    ]
    assert [int(match[1]) for match in timed if match] == list(indexes), done.stderr
    for index, proof in zip(indexes, proofs, strict=True):
        assert set(proof) == {"index", "size", "entry_hash", "audit_path"} and proof["index"] == index
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
        ("prove", "inclusion", "0", "37", "--size", "37"),  # one of several
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


def test_log_find_prints_the_index_of_a_record_or_a_call(
    logged: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, _ = logged
    done = colibri("call", "audit_session_start", '{"session_id": "found"}', env=env)
    assert done.returncode == 0, done.stderr
    db = tmp_path / "colibri.db"
    correlation_id = query(db, "SELECT correlation_id FROM actions ORDER BY sequence_no DESC")[0][0]
    action_index = query(db, "SELECT idx FROM log_entries WHERE kind = 'action'")[0][0]
    for args, expected in (
        (("--record", "1"), 0),
        (("--record", str(RECORDS)), RECORDS - 1),
        (("--action", correlation_id), action_index),
    ):
        found = colibri("log", "find", *args, env=env)
        assert found.returncode == 0, found.stderr
        assert found.stdout == f"{expected}\n"
    for args in (("--record", "999"), ("--action", "no-such-call")):
        missing = colibri("log", "find", *args, env=env)
        assert missing.returncode == 2 and missing.stdout == "" and "there is no" in missing.stderr
    assert colibri("log", "find", env=env).returncode == 2  # one of --record and --action is required
    conn = raw_connection(db)
    conn.execute("DELETE FROM log_entries WHERE kind = 'record' AND ref = 5")
    conn.close()
    unlogged = colibri("log", "find", "--record", "5", env=env)
    assert unlogged.returncode == 1 and "is in no log entry" in unlogged.stderr


def test_verify_refuses_a_huge_checkpoint_file_and_quotes_little_of_a_bad_line(
    logged: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    """Issue 23: `verify --checkpoint /dev/zero` read without limit and echoed a 50 MB line."""
    env, verifier_key = logged
    endless = colibri("verify", "--checkpoint", "/dev/zero", "--key", verifier_key, env=env, timeout=30)
    assert endless.returncode == 2 and "over 1 MiB" in endless.stderr
    assert len(endless.stderr) < 500 and endless.stdout == ""
    big = tmp_path / "big.checkpoint"
    big.write_bytes(b"x" * (1 << 20) + b"\n")
    assert colibri("verify", "--checkpoint", str(big), "--key", verifier_key, env=env).returncode == 2

    note = colibri("checkpoint", env=env).stdout
    long_line = "\u2014 " + "A" * 500_000  # a signature line of half a megabyte
    bad = tmp_path / "bad.checkpoint"
    bad.write_text(note + long_line + "\n")
    done = colibri("verify", "--checkpoint", str(bad), "--key", verifier_key, env=env)
    assert done.returncode == 1 and "REJECTED" in done.stdout
    assert repr(long_line[:200]) + "... (500,002 characters)" in done.stdout  # 200 characters of it
    assert "A" * 199 not in done.stdout + done.stderr
    assert len(done.stdout) + len(done.stderr) < 2000
