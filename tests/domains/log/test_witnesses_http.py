"""`colibri serve --http` submits its checkpoints to witnesses too (SPEC §16): the witness duty runs
beside the interval checkpoints, which both transports start from one list (SPEC §14)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from tests.domains.log.helpers import generate_key
from tests.domains.log.witnesses import make_witness, running, write_policy
from tests.helpers import call, clean_env, ok_data, query
from tests.http.helpers import http_client
from tests.http.helpers import running as serving

pytestmark = pytest.mark.anyio

ORIGIN = "example.com/witnessed-over-http"
WAIT_S = 60.0


def _cosigned_sizes(db: Path) -> list[int]:
    rows = query(
        db,
        "SELECT c.size FROM log_checkpoints c WHERE EXISTS"
        " (SELECT 1 FROM log_cosignatures s WHERE s.checkpoint_id = c.id) ORDER BY c.id",
    )
    return [int(row[0]) for row in rows]


async def test_serve_http_has_its_checkpoints_cosigned(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    key, vkey = generate_key(tmp_path, env, ORIGIN)
    witness = make_witness(tmp_path, env, "w1", [f"{ORIGIN} {vkey}"])
    env.update(
        COLIBRI_SIGNING_KEY=str(key),
        COLIBRI_LOG_ORIGIN=ORIGIN,
        COLIBRI_CHECKPOINT_INTERVAL_S="0.5",
        COLIBRI_WITNESS_POLICY=str(write_policy(tmp_path / "w.policy", [witness], 1)),
    )
    db = tmp_path / "colibri.db"
    with running(witness), serving(env, tmp_path, "--no-auth") as server:
        async with http_client(server.url, None) as client:
            ok_data(await call(client, "audit_session_start", {"session_id": "s"}))
            ok_data(await call(client, "thought_record", {"session_id": "s", "kind": "plan", "content": "x"}))
        # Two calls and a record: three entries, all under a cosigned checkpoint in the end.
        deadline = time.monotonic() + WAIT_S
        while max(_cosigned_sizes(db), default=0) < 3:
            assert time.monotonic() < deadline, f"cosigned only {_cosigned_sizes(db)} over HTTP"
            await anyio.sleep(0.1)  # polling a condition while the server runs
