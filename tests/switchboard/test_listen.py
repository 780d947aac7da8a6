"""Resource updates reach 2026-era clients on `subscriptions/listen` (listening.py)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp.shared.subscriptions import ResourceUpdated

from tests.switchboard.helpers import Downstreams, switchboard, wait_for_state, write_config

pytestmark = pytest.mark.anyio

HEALTH = {"liveness_s": 0.2, "readiness_s": 0.5, "check_timeout_s": 2}


async def test_a_listen_stream_gets_the_updates_of_the_uris_it_names(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"r": downstreams.fault("r")}, health=HEALTH)
    async with switchboard(config, mode="auto") as client:
        await wait_for_state(client, "r", "HEALTHY")
        before = await client.call_tool("r.touch", {})
        async with client.listen(resource_subscriptions=["fault://r/status"]) as stream:
            during = await client.call_tool("r.touch", {})
            with anyio.fail_after(10):
                event = await anext(aiter(stream))
        with anyio.fail_after(10):
            while True:
                # The stream is gone: the switchboard lets go of the downstream subscription.
                after = await client.call_tool("r.touch", {})
                if after.structured_content == {"touched": False}:
                    break
                await anyio.sleep(0.05)
    assert before.structured_content == {"touched": False}, "nobody had subscribed yet"
    assert during.structured_content == {"touched": True}, "the listen stream subscribed the downstream"
    assert event == ResourceUpdated(uri="fault://r/status")
