"""Requests that need phase 2 wait for it (SPEC §1.3), whichever method they are: a 2026-era client
that asks for skills right after `server/discover` sees the declared mode's surface, not the MINIMAL
one phase 1 admits meanwhile. Several servers start at once, so phase 2 is still running when the
requests arrive even on a fast machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.helpers import clean_env, serve_params
from tests.runtime.test_skills_extension import ANSWER, SkillsGet, SkillsGetParams, skills_list, write_skill

pytestmark = pytest.mark.anyio

SERVERS = 6


async def _asked_at_once(folder: Path, era: str) -> dict[str, Any]:
    """Skills, resources and one skill, asked of a fresh server as soon as it is connected."""
    write_skill(folder / "skills")
    async with Client(serve_params(clean_env(folder)), mode=era, read_timeout_seconds=30) as client:
        listed = await skills_list(client)
        got = await client.session.send_request(
            SkillsGet(params=SkillsGetParams(uri="skill://pdf-tools/SKILL.md")), ANSWER
        )
        resources = await client.list_resources()
    return {"listed": listed, "got": got, "resources": [resource.uri for resource in resources.resources]}


@pytest.mark.parametrize("era", ["auto", "legacy"])
async def test_skills_asked_during_phase_2_wait_for_it_under_load(tmp_path: Path, era: str) -> None:
    answers: dict[int, dict[str, Any]] = {}

    async def one(index: int) -> None:
        folder = tmp_path / f"server-{index}"
        folder.mkdir()
        answers[index] = await _asked_at_once(folder, era)

    async with anyio.create_task_group() as servers:
        for index in range(SERVERS):
            servers.start_soon(one, index)

    assert sorted(answers) == list(range(SERVERS))
    for answer in answers.values():
        [entry] = answer["listed"]["skills"]
        assert entry["uri"] == "skill://pdf-tools/SKILL.md"
        assert answer["got"]["skill"] == entry
        assert "skill://pdf-tools/SKILL.md" in answer["resources"]


async def test_skills_after_a_failed_boot_name_the_failure_not_mode_minimal(tmp_path: Path) -> None:
    """READONLY on a missing file fails phase 2: the server stays in phase 1's MINIMAL, which no one
    declared, so the refusal says the boot failed instead of "not served in mode MINIMAL"."""
    env = clean_env(tmp_path, COLIBRI_MODE="READONLY")
    async with Client(serve_params(env), mode="auto", read_timeout_seconds=30) as client:
        with pytest.raises(MCPError) as refused:
            await skills_list(client)
    message = refused.value.error.message
    assert message.startswith("skills are not served yet: boot failed, serving MINIMAL"), message
    assert "colibri.db does not exist" in message and "mode MINIMAL" not in message
