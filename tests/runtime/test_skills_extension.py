"""The skill registry through the MCP Skills extension (SEP-2640) on a real `colibri serve`: advertised
under capabilities.extensions, `skills/list` and `skills/get` with each file's SHA-256, the files as
`skill://` resources, in both protocol eras; `skill_list` unchanged beside it."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from tests.helpers import call, clean_env, connect

pytestmark = pytest.mark.anyio

EXTENSION = "io.modelcontextprotocol/skills"
ANSWER = TypeAdapter(dict[str, Any])


class SkillsList(types.Request[types.PaginatedRequestParams | None, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: types.PaginatedRequestParams | None = None


class SkillsGetParams(types.RequestParams):
    uri: str


class SkillsGet(types.Request[SkillsGetParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"
    params: SkillsGetParams


def write_skill(root: Path) -> Path:
    folder = root / "pdf-tools"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: Fill and merge PDF forms\nlicense: MIT\n"
        "metadata:\n  version: '2.1'\n---\n# PDF tools\nSee references/FORMS.md.\n"
    )
    (folder / "references" / "FORMS.md").write_text("# Forms\n")
    (folder / "logo.bin").write_bytes(bytes(range(256)))
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return folder


def sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


async def skills_list(client: Client) -> dict[str, Any]:
    return await client.session.send_request(SkillsList(), ANSWER)


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_the_registry_is_served_as_the_skills_extension(tmp_path: Path, era: str) -> None:
    folder = write_skill(tmp_path / "skills")
    async with connect(clean_env(tmp_path), mode=era) as client:
        capabilities = client.server_capabilities
        listed = await skills_list(client)
        got = await client.session.send_request(
            SkillsGet(params=SkillsGetParams(uri="skill://pdf-tools/SKILL.md")), ANSWER
        )
        with pytest.raises(MCPError) as unknown:
            await client.session.send_request(
                SkillsGet(params=SkillsGetParams(uri="skill://nope/SKILL.md")), ANSWER
            )
        resources = await client.list_resources()
        skill_md = await client.read_resource("skill://pdf-tools/SKILL.md")
        binary = await client.read_resource("skill://pdf-tools/logo.bin")
        tool = await call(client, "skill_list", {})
    if era == "auto":
        # The 2025-11-25 schema has no capabilities.extensions: the SDK's wire sieve drops it there,
        # while the methods and resources answer in both eras.
        assert capabilities.extensions is not None and EXTENSION in capabilities.extensions
    [entry] = listed["skills"]
    assert got["skill"] == entry
    assert entry["uri"] == "skill://pdf-tools/SKILL.md"
    assert entry["frontmatter"] == {
        "name": "pdf-tools",
        "description": "Fill and merge PDF forms",
        "license": "MIT",
        "metadata": {"version": "2.1"},
    }
    # Every file of the folder, each with the SHA-256 of its bytes; .git is not part of the skill.
    assert entry["resources"] == [
        {"uri": "skill://pdf-tools/SKILL.md", "digest": sha256(folder / "SKILL.md")},
        {"uri": "skill://pdf-tools/logo.bin", "digest": sha256(folder / "logo.bin")},
        {
            "uri": "skill://pdf-tools/references/FORMS.md",
            "digest": sha256(folder / "references" / "FORMS.md"),
        },
    ]
    assert unknown.value.error.code == types.INVALID_PARAMS and "skills/list" in unknown.value.error.message
    by_uri = {resource.uri: resource for resource in resources.resources}
    assert by_uri["skill://pdf-tools/SKILL.md"].mime_type == "text/markdown"
    assert by_uri["skill://pdf-tools/SKILL.md"].description == "Fill and merge PDF forms"
    [text] = skill_md.contents
    assert isinstance(text, types.TextResourceContents)
    assert "sha256:" + hashlib.sha256(text.text.encode()).hexdigest() == entry["resources"][0]["digest"]
    [blob] = binary.contents
    assert isinstance(blob, types.BlobResourceContents) and base64.b64decode(blob.blob) == bytes(range(256))
    assert tool["data"]["skills"][0]["name"] == "pdf-tools"


async def test_a_changed_file_gets_a_new_digest_and_minimal_serves_no_skills(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "skills")
    async with connect(clean_env(tmp_path)) as client:
        before = (await skills_list(client))["skills"][0]["resources"]
        (folder / "references" / "FORMS.md").write_text("# Forms, second edition\n")
        after = (await skills_list(client))["skills"][0]["resources"]
    assert before[2]["digest"] != after[2]["digest"] == sha256(folder / "references" / "FORMS.md")
    async with connect(clean_env(tmp_path, COLIBRI_MODE="MINIMAL")) as client:
        with pytest.raises(MCPError) as refused:
            await skills_list(client)
    assert "not served in mode MINIMAL" in refused.value.error.message
