"""`initialize` (2025-11-25) and `server/discover` (2026-07-28) carry the workflow as `instructions`,
naming tools the server really lists; a server that changes nothing says so and what it serves."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import clean_env, connect

pytestmark = pytest.mark.anyio

# The workflow's steps, in the order an agent takes them.
STEPS = ["audit_session_start", "thought_record", "task_update", "merkle_finalize"]


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_both_eras_get_the_workflow_naming_listed_tools(tmp_path: Path, era: str) -> None:
    async with connect(clean_env(tmp_path), mode=era) as client:
        instructions = client.instructions
        version = client.session.protocol_version
        listed = {tool.name for tool in (await client.list_tools()).tools}
    assert version == ("2025-11-25" if era == "legacy" else "2026-07-28")
    assert instructions is not None
    assert set(STEPS) <= listed
    positions = [instructions.index(step) for step in STEPS]
    assert positions == sorted(positions), instructions
    assert "task_id" in instructions and "writeback" in instructions
    assert "done needs a writeback" in instructions
    assert len(instructions.splitlines()) <= 10, "a few lines, not a manual"


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_a_minimal_server_says_it_changes_nothing(tmp_path: Path, era: str) -> None:
    async with connect(clean_env(tmp_path, COLIBRI_MODE="MINIMAL"), mode=era) as client:
        instructions = client.instructions
    assert instructions is not None
    assert instructions.splitlines()[-1] == (
        "This server runs in mode MINIMAL and changes nothing: it serves only server_ping, server_health; "
        "sessions, records and task changes need a server in FULL."
    )
