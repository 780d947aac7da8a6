from __future__ import annotations

import os
from pathlib import Path

import pytest

from colibri.domains.skills.roots import Root, roots, roots_from

CWD = Path("/work/project")
HOME = Path("/home/agent")


def test_defaults_when_the_variable_is_unset() -> None:
    assert roots({}, cwd=CWD, home=HOME) == (
        Root(CWD / ".agents/skills", configured=False),
        Root(CWD / ".claude/skills", configured=False),
        Root(HOME / ".agents/skills", configured=False),
    )


def test_an_empty_variable_means_unset_as_in_config() -> None:
    assert roots({"COLIBRI_SKILLS_DIR": ""}, cwd=CWD, home=HOME) == roots({}, cwd=CWD, home=HOME)


def test_several_configured_roots_keep_their_order() -> None:
    value = os.pathsep.join(["/b/skills", "/a/skills", "", "relative/skills", "~/mine"])
    assert roots({"COLIBRI_SKILLS_DIR": value}, cwd=CWD, home=HOME) == (
        Root(Path("/b/skills"), configured=True),
        Root(Path("/a/skills"), configured=True),
        Root(CWD / "relative/skills", configured=True),
        Root(HOME / "mine", configured=True),
    )


def test_configured_roots_replace_the_defaults() -> None:
    found = roots({"COLIBRI_SKILLS_DIR": "/only"}, cwd=CWD, home=HOME)
    assert [root.path for root in found] == [Path("/only")]


def test_a_repeated_root_keeps_its_first_place() -> None:
    value = os.pathsep.join(["/a", "/b", "/a/", "/b/../a"])
    assert [root.path for root in roots({"COLIBRI_SKILLS_DIR": value}, cwd=CWD, home=HOME)] == [
        Path("/a"),
        Path("/b"),
    ]


def test_home_equal_to_cwd_gives_one_agents_root() -> None:
    found = [root.path for root in roots_from(None, CWD, CWD)]
    assert found == [CWD / ".agents/skills", CWD / ".claude/skills"]


def test_home_and_cwd_default_to_the_process_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("COLIBRI_SKILLS_DIR", raising=False)
    assert [root.path for root in roots()] == [
        tmp_path / ".agents/skills",
        tmp_path / ".claude/skills",
        tmp_path / "home/.agents/skills",
    ]


def test_home_comes_from_the_given_environment() -> None:
    assert roots({"HOME": "/elsewhere"}, cwd=CWD)[-1].path == Path("/elsewhere/.agents/skills")
