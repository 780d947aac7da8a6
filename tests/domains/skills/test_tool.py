"""`skill_list` end to end: a real `colibri serve` subprocess in FULL and READONLY, through the SDK client."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.domains.skills import helpers as tree
from tests.domains.skills.helpers import FixtureTree, valid, write_skill
from tests.helpers import call, chain_error, connect, ok_data

pytestmark = pytest.mark.anyio


def names(data: dict[str, Any]) -> list[str]:
    return [skill["name"] for skill in data["skills"]]


def check_fixture_tree(data: dict[str, Any], fixture_tree: FixtureTree) -> None:
    assert names(data) == sorted(tree.LISTED)
    cases = ((fixture_tree.project, tree.PROJECT_ERRORS), (fixture_tree.user, tree.USER_ERRORS))
    for root, expected in cases:
        errors = tree.errors_by_path(data, root)
        assert {path: error["code"] for path, error in errors.items()} == {
            path: code for path, (code, _) in expected.items()
        }
    skills = tree.by_name(data)
    assert skills["full-skill"]["allowed-tools"] == "Bash(git:*) Read"
    assert skills["name-differs"]["warnings"] and skills["minimal-skill"]["warnings"] == []


async def test_full_mode_lists_the_fixture_tree_and_refuses_bad_input(
    server_env: dict[str, str], fixture_tree: FixtureTree
) -> None:
    server_env["COLIBRI_SKILLS_DIR"] = fixture_tree.skills_dir
    async with connect(server_env) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        tool = listed["skill_list"]
        assert tool.input_schema["properties"]["query"]["anyOf"][0]["maxLength"] == 200
        assert "SKILL.md" in (tool.description or "")
        assert tool.output_schema is not None

        check_fixture_tree(ok_data(await call(client, "skill_list")), fixture_tree)
        assert names(ok_data(await call(client, "skill_list", {"query": "NESTED"}))) == ["nested-skill"]
        queried = ok_data(await call(client, "skill_list", {"query": "every optional field"}))
        assert names(queried) == ["full-skill"]
        assert len(queried["errors"]) == len(tree.PROJECT_ERRORS) + len(tree.USER_ERRORS)
        assert names(ok_data(await call(client, "skill_list", {"unknown": 1}))) == sorted(tree.LISTED)

        error = chain_error(await call(client, "skill_list", {"query": 5}))
        assert error["code"] == "INVALID_PARAMS"
        assert [issue["path"] for issue in error["details"]["issues"]] == ["query"]
        assert "query" in error["message"] and "string" in error["message"]

        error = chain_error(await call(client, "skill_list", {"query": "x" * 201}))
        assert error["code"] == "INVALID_PARAMS"
        assert "at most 200 characters" in error["message"]


async def test_changes_between_calls_show_up(server_env: dict[str, str], tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_skill(first, "kept", valid("kept"))
    write_skill(second, "edited", valid("edited", "Before."))
    server_env["COLIBRI_SKILLS_DIR"] = os.pathsep.join([str(first), str(second)])
    async with connect(server_env) as client:
        assert names(ok_data(await call(client, "skill_list"))) == ["edited", "kept"]

        write_skill(second, "added", valid("added"))
        write_skill(second, "edited", valid("edited", "After the edit."))
        data = ok_data(await call(client, "skill_list"))
        assert names(data) == ["added", "edited", "kept"]
        assert tree.by_name(data)["edited"]["description"] == "After the edit."

        (first / "kept" / "SKILL.md").unlink()
        write_skill(first, "edited", valid("edited", "Now from the first root."))
        data = ok_data(await call(client, "skill_list"))
        assert names(data) == ["added", "edited"]
        assert tree.by_name(data)["edited"]["description"] == "Now from the first root."
        assert [(e["code"], e["path"]) for e in data["errors"]] == [
            ("name_clash", str(second / "edited" / "SKILL.md"))
        ]


async def test_default_roots_come_from_the_working_directory_and_home(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    del server_env["COLIBRI_SKILLS_DIR"]
    project, home = tmp_path / "project", Path(server_env["HOME"])
    write_skill(project / ".agents/skills", "shared", valid("shared", "From .agents."))
    write_skill(project / ".claude/skills", "shared", valid("shared", "From .claude."))
    write_skill(project / ".claude/skills", "claude-only", valid("claude-only"))
    write_skill(home / ".agents/skills", "shared", valid("shared", "From home."))
    write_skill(home / ".agents/skills", "home-only", valid("home-only"))
    async with connect(server_env, cwd=project) as client:
        data = ok_data(await call(client, "skill_list"))
        assert names(data) == ["claude-only", "home-only", "shared"]
        assert tree.by_name(data)["shared"]["description"] == "From .agents."
        assert [(e["code"], e["path"]) for e in data["errors"]] == [
            ("name_clash", str(project / ".claude/skills/shared/SKILL.md")),
            ("name_clash", str(home / ".agents/skills/shared/SKILL.md")),
        ]
        shutil.rmtree(project / ".agents")
        shutil.rmtree(project / ".claude")
        data = ok_data(await call(client, "skill_list"))
        assert names(data) == ["home-only", "shared"] and data["errors"] == []  # missing defaults are quiet
        assert tree.by_name(data)["shared"]["description"] == "From home."


@pytest.mark.sqlite_only  # reads or alters the SQLite file itself
async def test_readonly_mode_lists_skills_and_leaves_the_database_alone(
    server_env: dict[str, str], fixture_tree: FixtureTree
) -> None:
    server_env["COLIBRI_SKILLS_DIR"] = fixture_tree.skills_dir
    async with connect(server_env) as client:  # FULL creates and migrates the database
        ok_data(await call(client, "server_ping"))
    db = Path(server_env["COLIBRI_DB_PATH"])
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    async with connect({**server_env, "COLIBRI_MODE": "READONLY"}) as client:
        assert ok_data(await call(client, "server_health"))["mode"] == "READONLY"
        assert "skill_list" in {tool.name for tool in (await client.list_tools()).tools}
        check_fixture_tree(ok_data(await call(client, "skill_list")), fixture_tree)
        write_skill(fixture_tree.user, "readonly-added", valid("readonly-added"))
        assert "readonly-added" in names(ok_data(await call(client, "skill_list", {"query": "readonly"})))
        assert chain_error(await call(client, "skill_list", {"query": ["a"]}))["code"] == "INVALID_PARAMS"
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


async def test_minimal_mode_does_not_admit_skill_list(server_env: dict[str, str]) -> None:
    async with connect({**server_env, "COLIBRI_MODE": "MINIMAL"}) as client:
        error = chain_error(await call(client, "skill_list"))
    assert error["code"] == "TOOL_NOT_ADMITTED"
