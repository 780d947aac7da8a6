from __future__ import annotations

from pathlib import Path

import pytest

from colibri.core.modes import Mode
from colibri.core.spec import ToolContext
from colibri.core.state import ServerState
from colibri.domains.skills.handlers import skill_list
from colibri.domains.skills.models import SkillListArguments
from tests.domains.skills.helpers import valid, write_skill


def _context(skills_dirs: tuple[Path, ...] | None) -> ToolContext:
    state = ServerState(version="test", declared_mode=Mode.FULL, mode=Mode.FULL, skills_dirs=skills_dirs)
    return ToolContext(server=state)


def test_the_handler_uses_the_configured_roots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_skill(tmp_path / "one", "first", valid("first", "The first root's skill."))
    write_skill(tmp_path / "two", "second", valid("second"))
    assert [s.name for s in skill_list(_context((tmp_path / "one",)), SkillListArguments()).skills] == [
        "first"
    ]
    assert [s.name for s in skill_list(_context((tmp_path / "two",)), SkillListArguments()).skills] == [
        "second"
    ]

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    write_skill(tmp_path / ".claude/skills", "project-skill", valid("project-skill", "Found by QUERY."))
    result = skill_list(_context(None), SkillListArguments(query="query"))
    assert [s.name for s in result.skills] == ["project-skill"] and result.errors == []
