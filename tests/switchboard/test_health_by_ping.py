"""Health checks ask nothing a downstream audits (SPEC §21): liveness is an MCP ping, readiness a
tools/list, so a Colibri behind a switchboard that checks it every fraction of a second keeps no
`server_health` or `server_ping` rows of them (they filled its log). A Colibri that cannot serve
calls is still judged not ready, from its list: MINIMAL lists only its system tools."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.helpers import query
from tests.switchboard.helpers import FAST, Downstreams, servers, switchboard, wait_for_state, write_config

pytestmark = pytest.mark.anyio

CHECKS = 12  # readiness every 0.5 s and liveness every 0.2 s (FAST): several of each


async def test_checks_leave_no_rows_in_a_downstream_colibri_and_minimal_is_not_ready(tmp_path: Path) -> None:
    (tmp_path / "minimal").mkdir()
    config = write_config(
        tmp_path,
        {
            "colibri": Downstreams(tmp_path).colibri(),
            "minimal": Downstreams(tmp_path / "minimal").colibri(COLIBRI_MODE="MINIMAL"),
        },
        health=FAST,
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "colibri", "HEALTHY")
        await wait_for_state(client, "minimal", "UNHEALTHY")
        with anyio.fail_after(30):
            while (await servers(client))["colibri"]["checks_run"] < CHECKS:
                await anyio.sleep(0.1)  # polling the condition while the checks run
        status = await servers(client)
    rows = query(tmp_path / "colibri" / "colibri.db", "SELECT tool, COUNT(*) AS n FROM actions GROUP BY tool")
    assert {row["tool"]: row["n"] for row in rows} == {}, "health checks left rows in the downstream's log"
    colibri, minimal = status["colibri"], status["minimal"]
    assert colibri["last_checks"]["readiness"]["ok"] is True
    assert minimal["server_name"] == "colibri" and minimal["routable"] is False
    assert "colibri lists only server_ping and server_health" in minimal["last_failure"]
    assert minimal["last_checks"]["readiness"]["ok"] is False
    assert minimal["last_checks"]["liveness"]["ok"] is True
