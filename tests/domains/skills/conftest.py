from __future__ import annotations

from pathlib import Path

import pytest

from colibri.domains.skills.registry import SkillRegistry
from tests.domains.skills import helpers as tree


@pytest.fixture
def fixture_tree(tmp_path: Path) -> tree.FixtureTree:
    """The two-root fixture tree of every spec case, written fresh in tmp_path."""
    return tree.build(tmp_path)


@pytest.fixture
def registry() -> SkillRegistry:
    return SkillRegistry()
