"""A stdio downstream that dies: refused or replaced at once, restarted with backoff, healthy again."""

from __future__ import annotations

import os
import signal
import time
from datetime import datetime
from pathlib import Path

import anyio
import pytest

from tests.helpers import chain_error
from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    call,
    servers,
    switchboard,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio

BACKOFF_S = 0.4


def seconds(wall: str) -> float:
    return datetime.strptime(wall, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


async def test_a_killed_downstream_is_refused_or_replaced_at_once_then_restarted(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {"a": downstreams.fault("a"), "b": downstreams.fault("b")},
        fallbacks={"work": ["a.work", "b.work"]},
        health={**FAST, "restart_backoff_s": BACKOFF_S},
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "a", "HEALTHY")
        await wait_for_state(client, "b", "HEALTHY")
        pid = (await client.call_tool("a.info", {})).structured_content["pid"]  # type: ignore[index]
        killed = time.perf_counter()
        os.kill(pid, signal.SIGKILL)
        # A dying process can accept a write for a moment longer (its last threads still hold the
        # pipe); a call slipping in then may have been received, so it is reported lost
        # (UPSTREAM_ERROR), not refused. So: wait for the switchboard to see the death, and time it.
        while (await servers(client))["a"]["state"] == "HEALTHY":
            await anyio.sleep(0.001)
        detected_in = time.perf_counter() - killed

        started = time.perf_counter()
        refused = chain_error(await call(client, "a.work", {"value": 1}))
        refused_in = time.perf_counter() - started
        started = time.perf_counter()
        replaced = await client.call_tool("work", {"value": 2})
        replaced_in = time.perf_counter() - started

        restarted = await wait_for_state(client, "a", "HEALTHY", timeout=10)
        new_pid = (await client.call_tool("a.info", {})).structured_content["pid"]  # type: ignore[index]
        after = await client.call_tool("work", {"value": 3})
        b_calls = (await servers(client))["b"]["calls"]

    assert detected_in < 0.5, f"the death was noticed after {detected_in * 1000:.0f} ms"
    assert refused["code"] == "SERVICE_UNAVAILABLE"
    assert refused["message"].startswith(
        "a.work is unavailable: a is starting: lost connection: the process exited"
    )
    assert refused_in < 0.1, f"refusal took {refused_in * 1000:.0f} ms"
    assert replaced.structured_content == {"echo": {"value": 2}, "server": "b", "call": 1}
    assert replaced_in < 0.1, f"fallback took {replaced_in * 1000:.0f} ms"
    assert downstreams.calls("a") == 1 and b_calls == 1  # the refused call never reached a process

    assert new_pid != pid
    assert restarted["restarts"] == 1
    moves = [(t["from"], t["to"]) for t in restarted["transitions"]]
    assert moves == [("STARTING", "HEALTHY"), ("HEALTHY", "STARTING"), ("STARTING", "HEALTHY")]
    lost, back = restarted["transitions"][1], restarted["transitions"][2]
    assert "the process exited" in lost["reason"]
    assert seconds(back["at"]) - seconds(lost["at"]) >= BACKOFF_S, "restarted before the backoff"
    assert after.structured_content == {"echo": {"value": 3}, "server": "a", "call": 1}
