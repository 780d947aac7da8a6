"""Two `colibri serve` processes appending to one file at once: one log, entries 0..n-1
without a gap, each record and finished call logged once, and every checkpoint either
process signed consistent with every later one."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from colibri.domains.log import rfc9162, tree
from colibri.domains.log.checkpoint import open_checkpoint
from colibri.domains.log.note import Signer
from colibri.storage import SQLiteDatabase
from tests.helpers import call, clean_env, connect, ok_data, query

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PER_SERVER = 150


async def test_two_processes_append_one_gapless_log_of_consistent_checkpoints(tmp_path: Any) -> None:
    # No COLIBRI_SIGNING_KEY: both processes boot at once and must agree on one colibri.key.
    env = clean_env(tmp_path, COLIBRI_CHECKPOINT_INTERVAL_S="0.05")
    async with connect(env) as first, connect(env) as second:

        async def work(client: Client, label: str) -> None:
            for burst in range(3):
                session = f"{label}-{burst}"
                ok_data(await call(client, "audit_session_start", {"session_id": session}))
                for i in range(PER_SERVER // 3):
                    args = {"session_id": session, "kind": "observation", "content": f"{label} {i}"}
                    ok_data(await call(client, "thought_record", args))
                    if i % 10 == 0:
                        ok_data(await call(client, "task_list", {}))
                ok_data(await call(client, "merkle_finalize", {"session_id": session}))

        async with anyio.create_task_group() as group:
            group.start_soon(work, first, "a")
            group.start_soon(work, second, "b")
        report = ok_data(await call(first, "audit_verify_chain"))
        assert report["valid"], report

    db_path = tmp_path / "colibri.db"
    indexes = [row[0] for row in query(db_path, "SELECT idx FROM log_entries ORDER BY idx")]
    assert indexes == list(range(len(indexes)))
    records = query(db_path, "SELECT count(*) FROM thought_records")[0][0]
    finished = query(db_path, "SELECT count(*) FROM actions WHERE outcome != 'running'")[0][0]
    assert len(indexes) == records + finished
    logged_records = [
        row[0] for row in query(db_path, "SELECT ref FROM log_entries WHERE kind = 'record' ORDER BY idx")
    ]
    assert logged_records == list(range(1, records + 1))
    logged_actions = [row[0] for row in query(db_path, "SELECT ref FROM log_entries WHERE kind = 'action'")]
    assert len(set(logged_actions)) == len(logged_actions) == finished

    verifier = Signer.parse((tmp_path / "colibri.key").read_text()).verifier()
    notes = [row[0] for row in query(db_path, "SELECT note FROM log_checkpoints ORDER BY id")]
    checkpoints = sorted({(cp.size, cp.root) for cp in (open_checkpoint(n, verifier) for n in notes)})
    assert len(checkpoints) > 6, "both processes signed checkpoints: at seals, on the interval, at shutdown"
    db = SQLiteDatabase.open(db_path, readonly=True)
    try:
        for i, (old_size, old_root) in enumerate(checkpoints):
            assert tree.root(db, old_size) == old_root
            for new_size, new_root in checkpoints[i:]:
                proof = tree.consistency_proof(db, old_size, new_size)
                assert rfc9162.verify_consistency(old_size, new_size, old_root, new_root, proof)
    finally:
        db.close()
