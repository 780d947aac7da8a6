"""Checkpoints made by `colibri serve`: at every seal (returned by merkle_finalize and
merkle_root), on the interval while the log grows, at shutdown; stored, exported, and
verifiable with the verifier key `colibri key generate` printed — and with no other."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from colibri.domains.log.checkpoint import open_checkpoint
from colibri.domains.log.note import Verifier
from tests.domains.log.helpers import generate_key
from tests.helpers import call, clean_env, colibri, connect, ok_data, query

pytestmark = pytest.mark.anyio


async def _session_with_records(client: Any, session_id: str, count: int) -> dict[str, Any]:
    ok_data(await call(client, "audit_session_start", {"session_id": session_id}))
    for i in range(count):
        ok_data(
            await call(
                client, "thought_record", {"session_id": session_id, "kind": "plan", "content": f"{i}"}
            )
        )
    return ok_data(await call(client, "merkle_finalize", {"session_id": session_id}))  # type: ignore[no-any-return]


async def test_a_checkpoint_from_serve_verifies_with_the_generated_verifier_key(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    key_file, verifier_key = generate_key(tmp_path, env)
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert key_file.read_text().startswith("PRIVATE+KEY+example.com/colibri+")
    exported = tmp_path / "exported"
    env.update(COLIBRI_SIGNING_KEY=str(key_file), COLIBRI_CHECKPOINT_EXPORT=str(exported))
    async with connect(env) as client:
        sealed = await _session_with_records(client, "s1", 3)
        root = ok_data(await call(client, "merkle_root", {"session_id": "s1"}))
    note = sealed["checkpoint"]
    assert root["checkpoint"] == note
    checkpoint = open_checkpoint(note, Verifier.parse(verifier_key))
    database_id = query(tmp_path / "colibri.db", "SELECT database_id FROM log_meta")[0][0]
    assert checkpoint.origin == f"colibri/{database_id}"
    # 3 records plus the finished calls before the seal: audit_session_start and 3 thought_records.
    assert checkpoint.size == 3 + 4
    assert (exported / f"{checkpoint.size}.checkpoint").read_text() == note

    saved = tmp_path / "seal.checkpoint"
    saved.write_text(note)
    db = str(tmp_path / "colibri.db")
    good = colibri("verify", "--db", db, "--checkpoint", str(saved), "--key", verifier_key, env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "VALID" in good.stdout

    _, other_key = generate_key(tmp_path, env, name="example.com/colibri-other")
    (tmp_path / "again").mkdir()
    _, same_name_key = generate_key(tmp_path / "again", env)  # same name, another key
    for wrong in (other_key, same_name_key):
        rejected = colibri("verify", "--db", db, "--checkpoint", str(saved), "--key", wrong, env=env)
        assert rejected.returncode == 1
        assert "REJECTED" in rejected.stdout and "no signature by the key" in rejected.stdout

    body, _, signature = note.partition("\n\n")
    lines = body.split("\n")
    for changed in (
        [lines[0], str(int(lines[1]) + 1), lines[2]],  # size
        [lines[0], lines[1], ("A" if lines[2][0] != "A" else "B") + lines[2][1:]],  # root
    ):
        forged = tmp_path / "forged.checkpoint"
        forged.write_text("\n".join(changed) + "\n\n" + signature)
        done = colibri("verify", "--db", db, "--checkpoint", str(forged), "--key", verifier_key, env=env)
        assert done.returncode == 1
        assert "signature" in done.stdout and "invalid" in done.stdout


async def test_serve_makes_colibri_key_beside_the_database_and_prints_the_verifier_key(
    tmp_path: Path,
) -> None:
    env = clean_env(tmp_path)
    done = colibri("call", "audit_session_start", "{}", env=env)
    assert done.returncode == 0, done.stderr
    key_file = tmp_path / "colibri.key"
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    from colibri.domains.log.note import Signer

    verifier_key = Signer.parse(key_file.read_text()).verifier().key()
    assert f"verifier key: {verifier_key}" in done.stderr
    again = colibri("call", "audit_session_start", "{}", env=env)
    assert "verifier key" not in again.stderr, "the key is made once"
    latest = query(tmp_path / "colibri.db", "SELECT note FROM log_checkpoints ORDER BY id DESC LIMIT 1")[0][0]
    assert open_checkpoint(latest, Verifier.parse(verifier_key)).size == 2  # one entry per call


async def test_interval_and_shutdown_checkpoints_are_stored_exported_and_consistent(tmp_path: Path) -> None:
    exported = tmp_path / "exported"
    env = clean_env(tmp_path, COLIBRI_CHECKPOINT_INTERVAL_S="0.2", COLIBRI_CHECKPOINT_EXPORT=str(exported))
    db = tmp_path / "colibri.db"
    async with connect(env) as client:
        ok_data(await call(client, "audit_session_start", {"session_id": "s"}))
        await _interval_checkpoint_of_the_whole_log(db)
        for i in range(5):
            ok_data(
                await call(client, "thought_record", {"session_id": "s", "kind": "plan", "content": f"{i}"})
            )
        await _interval_checkpoint_of_the_whole_log(db)
        size_before_close = len(query(db, "SELECT idx FROM log_entries"))
    rows = query(tmp_path / "colibri.db", "SELECT size, reason FROM log_checkpoints ORDER BY id")
    reasons = [row["reason"] for row in rows]
    assert "interval" in reasons and reasons[-1] in ("shutdown", "interval")
    sizes = [row["size"] for row in rows]
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes), "a checkpoint only when the log grew"
    final = len(query(tmp_path / "colibri.db", "SELECT idx FROM log_entries"))
    assert sizes[-1] == final >= size_before_close
    assert sorted(int(p.stem) for p in exported.glob("*.checkpoint")) == sizes
    db = str(tmp_path / "colibri.db")
    vkey = _verifier_of(tmp_path / "colibri.key")
    for size in sizes:
        done = colibri(
            "verify", "--db", db, "--checkpoint", str(exported / f"{size}.checkpoint"), "--key", vkey, env=env
        )
        assert done.returncode == 0, done.stdout


async def _interval_checkpoint_of_the_whole_log(db: Path, timeout: float = 60.0) -> None:
    """Wait for an interval checkpoint that covers every entry the log holds now."""
    deadline = time.monotonic() + timeout
    while True:
        size = len(query(db, "SELECT idx FROM log_entries"))
        sizes = [row[0] for row in query(db, "SELECT size FROM log_checkpoints WHERE reason = 'interval'")]
        if size > 0 and size in sizes:
            return
        assert time.monotonic() < deadline, f"no interval checkpoint of the log's {size} entries: {sizes}"
        await anyio.sleep(0.05)  # polling a condition while the server runs


def _verifier_of(key_file: Path) -> str:
    from colibri.domains.log.note import Signer

    return Signer.parse(key_file.read_text()).verifier().key()


async def test_audit_verify_chain_reports_whether_the_stored_tree_matches_its_entries(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    async with connect(env) as client:
        await _session_with_records(client, "s", 4)
        report = ok_data(await call(client, "audit_verify_chain"))
        assert (
            report["valid"] and report["log"]["tree_matches_entries"] and report["log"]["entries_match_rows"]
        )
        assert report["log"]["size"] >= 9
        ranged = ok_data(await call(client, "audit_verify_chain", {"from_seq": 1, "to_seq": 2}))
        assert ranged["log"] is None
        query(tmp_path / "colibri.db", "UPDATE log_nodes SET hash = zeroblob(32) WHERE id = 2")
        broken = ok_data(await call(client, "audit_verify_chain"))
        assert broken["valid"] is False and broken["log"]["tree_matches_entries"] is False
        assert broken["first_break"] is None, "the chain itself is intact"
