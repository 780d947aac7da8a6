"""The switchboard's audit store is a normal Colibri store (SPEC §15), shown on a store a real
switchboard made by routing real calls, with a real `colibri serve` sharing the file meanwhile:
`colibri verify --db`, `log entries`, `log find`, `prove inclusion`, `checkpoint` and the pages of
`colibri ui` all work on it, and the sharing server's own calls land in the same log.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colibri.domains.log.checkpoint import open_checkpoint
from colibri.domains.log.note import Verifier
from colibri.domains.proofs import merkle
from tests.helpers import call, clean_env, colibri, connect, ok_data
from tests.http.helpers import get
from tests.switchboard.audit_helpers import actions, calls
from tests.switchboard.helpers import Downstreams, switchboard, wait_for_state, write_config
from tests.ui.browser import ui_server
from tests.ui.offline_proof import check_call_proof

pytestmark = pytest.mark.anyio

HEALTH = {"liveness_s": 0.2, "readiness_s": 0.5, "check_timeout_s": 2}
ROUTED = 3


async def _route_and_share(tmp_path: Path, store: Path, env: dict[str, str]) -> None:
    """Real calls through a switchboard, and, while it serves, a `colibri serve` on its store."""
    config = write_config(
        tmp_path, {"fault": Downstreams(tmp_path).fault("fault")}, health=HEALTH, audit={"db": store.name}
    )
    async with switchboard(config) as board:
        await wait_for_state(board, "fault", "HEALTHY")
        for n in range(ROUTED - 1):
            routed = await board.call_tool("fault.work", {"n": n})
            assert routed.is_error is not True, routed
        async with connect(env) as shared:
            ok_data(await call(shared, "audit_session_start", {"session_id": "shared"}))
            recorded = {"session_id": "shared", "kind": "plan", "content": "beside the gateway"}
            ok_data(await call(shared, "thought_record", recorded))
        routed = await board.call_tool("fault.work", {"n": ROUTED - 1})  # after the server left
        assert routed.is_error is not True, routed


async def test_the_gateway_store_works_with_every_command_and_a_sharing_serve(tmp_path: Path) -> None:
    store = tmp_path / "gateway.db"
    env = clean_env(tmp_path, COLIBRI_DB_PATH=str(store))  # colibri.key beside it: the gateway's key
    await _route_and_share(tmp_path, store, env)

    rows = actions(store)
    routed = calls(store)
    assert [row["tool"] for row in routed if "." in row["tool"]] == ["fault.work"] * ROUTED
    served = [row for row in rows if row["tool"] in ("audit_session_start", "thought_record")]
    assert [row["tool"] for row in served] == ["audit_session_start", "thought_record"]
    assert all(row["outcome"] == "ok" and row["log_index"] is not None for row in [*routed, *served])
    # The log interleaves both programs' calls in the order they happened.
    indexes = [row["log_index"] for row in rows if row in routed or row in served]
    assert indexes == sorted(indexes)

    verified = colibri("verify", "--db", str(store), env=env)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    shown = colibri("key", "show", str(tmp_path / "colibri.key"), env=env)
    assert shown.returncode == 0, shown.stderr
    vkey = shown.stdout.strip()
    made = colibri("checkpoint", "--db", str(store), env=env)
    assert made.returncode == 0, made.stderr
    checkpoint = open_checkpoint(made.stdout, Verifier.parse(vkey))
    entries = colibri("log", "entries", "--db", str(store), env=env).stdout.splitlines()
    assert len(entries) == checkpoint.size
    assert merkle.tree_root([bytes.fromhex(e) for e in entries]) == checkpoint.root

    last = routed[-1]
    found = colibri("log", "find", "--action", last["correlation_id"], "--db", str(store), env=env)
    assert found.returncode == 0, found.stderr
    assert int(found.stdout.strip()) == last["log_index"]
    proved = colibri("prove", "inclusion", str(last["log_index"]), "--db", str(store), env=env)
    assert proved.returncode == 0, proved.stderr
    proof = json.loads(proved.stdout)
    assert proof["entry_hash"] == entries[last["log_index"]]
    path = [bytes.fromhex(node) for node in proof["audit_path"]]
    assert merkle.verify_inclusion(
        bytes.fromhex(proof["entry_hash"]), last["log_index"], checkpoint.size, path, checkpoint.root
    )

    with ui_server(env, tmp_path, "--no-auth") as base:
        status, _, audit = get(f"{base}/audit")
        assert status == 200 and audit.decode().count("fault.work") >= ROUTED
        assert "thought_record" in audit.decode()
        status, _, page = get(f"{base}/audit/{last['sequence_no']}")
        assert status == 200 and "fault.work" in page.decode()
        status, _, bundle = get(f"{base}/audit/{last['sequence_no']}/proof.json")
        assert status == 200, bundle
    assert check_call_proof(json.loads(bundle), vkey) == []
