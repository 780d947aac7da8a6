"""The switchboard's audit store is witnessed like `colibri serve`'s log (SPEC §15, §16): with
COLIBRI_WITNESS_POLICY set for `colibri switchboard`, the checkpoints of its audit store go to a
real `colibri witness serve`, and the cosignature comes back into the store and its exported file.

The commands that read the store afterwards run without the policy: `colibri checkpoint` submits
to the witnesses itself when it has one, and then the switchboard's own submission would go unseen.
"""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from tests.domains.log.helpers import generate_key
from tests.domains.log.witnesses import make_witness, running, write_policy
from tests.helpers import clean_env, colibri, query
from tests.switchboard.audit_helpers import calls
from tests.switchboard.helpers import Downstreams, switchboard, wait_for_state, write_config

pytestmark = pytest.mark.anyio

ORIGIN = "example.com/gateway"
HEALTH = {"liveness_s": 0.2, "readiness_s": 0.5, "check_timeout_s": 2}
CALLS = 3
WAIT_S = 60.0


def _cosigned_size(store: Path) -> int:
    """The largest size of the store's checkpoints that carry a cosignature (0: none yet)."""
    rows = query(
        store,
        "SELECT MAX(c.size) FROM log_checkpoints c"
        " WHERE EXISTS (SELECT 1 FROM log_cosignatures s WHERE s.checkpoint_id = c.id)",
    )
    return int(rows[0][0] or 0)


async def test_the_audit_stores_checkpoints_are_cosigned_by_a_real_witness(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    key, vkey = generate_key(tmp_path, env, ORIGIN)
    witness = make_witness(tmp_path, env, "w1", [f"{ORIGIN} {vkey}"])
    policy = write_policy(tmp_path / "witnesses.policy", [witness], 1)
    exported = tmp_path / "exported"
    config = write_config(
        tmp_path,
        {"fault": Downstreams(tmp_path).fault("fault")},
        health=HEALTH,
        audit={"db": "gateway.db", "signing_key": str(key)},
    )
    store = tmp_path / "gateway.db"
    witnessed = {
        "COLIBRI_WITNESS_POLICY": str(policy),
        "COLIBRI_LOG_ORIGIN": ORIGIN,
        "COLIBRI_CHECKPOINT_INTERVAL_S": "0.5",
        "COLIBRI_CHECKPOINT_EXPORT": str(exported),
    }
    with running(witness):
        async with switchboard(config, env=witnessed) as client:
            await wait_for_state(client, "fault", "HEALTHY")
            for n in range(CALLS):
                worked = await client.call_tool("fault.work", {"n": n})
                assert worked.is_error is not True, worked
            logged = [row["log_index"] for row in calls(store)]
            assert len(logged) == CALLS and None not in logged, logged
            with anyio.fail_after(WAIT_S):
                while _cosigned_size(store) <= max(logged):
                    await anyio.sleep(0.1)  # polling a condition while the switchboard serves
    size = _cosigned_size(store)

    status = colibri("checkpoint", "--status", "--db", str(store), env=env)
    assert status.returncode == 0, status.stderr
    cosigned = re.findall(
        r"^witness w1 \(http://127\.0\.0\.1:\d+\): last cosigned size (\d+);", status.stdout, re.M
    )
    assert cosigned and int(cosigned[0]) >= size, status.stdout
    # The exported checkpoint was written again with the cosignature: it meets the policy's quorum.
    checkpoint = exported / f"{size}.checkpoint"
    assert "— w1.example " in checkpoint.read_text()
    args = ("--checkpoint", str(checkpoint), "--key", vkey, "--witness-policy", str(policy))
    verified = colibri("verify", "--db", str(store), *args, env={**env, "COLIBRI_LOG_ORIGIN": ORIGIN})
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "1 of the policy's 1 cosigned it (quorum 1): w1" in verified.stdout
