"""The fixture tree through the registry: every case gets the behaviour the spec gives it, by name."""

from __future__ import annotations

from typing import Any

import pytest

from colibri.domains.skills.registry import SkillRegistry, matching
from tests.domains.skills import helpers as tree
from tests.domains.skills.helpers import NAME_64, NAME_65, PROJECT_ERRORS, USER_ERRORS, FixtureTree


@pytest.fixture
def listed(fixture_tree: FixtureTree, registry: SkillRegistry) -> dict[str, Any]:
    roots = tree.configured(fixture_tree.project, fixture_tree.user)
    return registry.list_skills(roots).model_dump(mode="json")


def test_exactly_the_valid_skills_are_listed_sorted_by_name(listed: dict[str, Any]) -> None:
    names = [skill["name"] for skill in listed["skills"]]
    assert names == sorted(tree.LISTED)


def test_every_skipped_case_is_reported_with_its_code_and_a_helpful_reason(
    listed: dict[str, Any], fixture_tree: FixtureTree
) -> None:
    for root, expected in ((fixture_tree.project, PROJECT_ERRORS), (fixture_tree.user, USER_ERRORS)):
        errors = tree.errors_by_path(listed, root)
        assert set(errors) == set(expected), root
        for path, (code, words) in expected.items():
            assert errors[path]["code"] == code, (path, errors[path])
            for word in words:
                assert word in errors[path]["reason"], (path, word, errors[path]["reason"])
            assert errors[path]["path"] == str(root / path)
    assert len(listed["errors"]) == len(PROJECT_ERRORS) + len(USER_ERRORS)


def test_errors_come_in_scan_order_roots_first(listed: dict[str, Any], fixture_tree: FixtureTree) -> None:
    paths = [error["path"] for error in listed["errors"]]
    assert paths[-1] == str(fixture_tree.user / "shared-name" / "SKILL.md")
    project = paths[:-1]
    assert project == sorted(project, key=lambda p: p.split("/"))


def test_skill_with_every_optional_field(listed: dict[str, Any], fixture_tree: FixtureTree) -> None:
    assert tree.by_name(listed)["full-skill"] == {
        "name": "full-skill",
        "description": "Uses every optional field of the Agent Skills format.",
        "path": str(fixture_tree.project / "full-skill" / "SKILL.md"),
        "license": "Apache-2.0",
        "compatibility": "Needs git and Python 3.11 or newer",
        "metadata": {"author": "colibri-tests", "version": "1.0"},
        "allowed-tools": "Bash(git:*) Read",
        "warnings": [],
    }


def test_minimal_skill_has_no_optional_keys(listed: dict[str, Any]) -> None:
    assert set(tree.by_name(listed)["minimal-skill"]) == {"name", "description", "path", "warnings"}


def test_name_folder_mismatch_is_listed_with_a_warning(
    listed: dict[str, Any], fixture_tree: FixtureTree
) -> None:
    skill = tree.by_name(listed)["name-differs"]
    assert skill["path"] == str(fixture_tree.project / "folder-differs" / "SKILL.md")
    [warning] = skill["warnings"]
    assert "'name-differs'" in warning and "'folder-differs'" in warning and "rename" in warning


def test_non_string_metadata_keeps_the_source_text_with_warnings(listed: dict[str, Any]) -> None:
    skill = tree.by_name(listed)["metadata-types"]
    assert skill["metadata"] == {
        "version": "1.10",
        "stable": "yes",
        "released": "2024-01-02",
        "build": "7",
        "empty": "",
        "label": "plain text",
    }
    warned = {warning.split(" ")[0] for warning in skill["warnings"]}
    assert warned == {
        "metadata.version",
        "metadata.stable",
        "metadata.released",
        "metadata.build",
        "metadata.empty",
        "metadata.tags",
    }
    assert any("metadata.tags is a list" in warning for warning in skill["warnings"])


def test_name_of_64_characters_is_the_longest_allowed(listed: dict[str, Any]) -> None:
    assert NAME_64 in tree.by_name(listed)
    assert NAME_65 not in tree.by_name(listed)


def test_depth_bound_lists_three_levels_and_skips_the_fourth(listed: dict[str, Any]) -> None:
    skills = tree.by_name(listed)
    assert skills["at-bound"]["path"].endswith("l1/l2/at-bound/SKILL.md")
    assert "too-deep" not in skills


def test_skill_folders_are_not_searched_for_more_skills(listed: dict[str, Any]) -> None:
    assert "inner-skill" not in tree.by_name(listed)


def test_git_and_node_modules_are_skipped_silently(listed: dict[str, Any], fixture_tree: FixtureTree) -> None:
    assert not {"in-git", "in-node-modules"} & set(tree.by_name(listed))
    reported = tree.errors_by_path(listed, fixture_tree.project)
    assert not [path for path in reported if path.startswith((".git/", "node_modules/"))]


def test_symlinks_out_of_the_root_are_refused(listed: dict[str, Any]) -> None:
    assert "escaped" not in tree.by_name(listed)


def test_the_earlier_root_wins_a_name_clash(listed: dict[str, Any], fixture_tree: FixtureTree) -> None:
    skill = tree.by_name(listed)["shared-name"]
    assert skill["description"] == "The project's copy."
    assert skill["path"] == str(fixture_tree.project / "shared-name" / "SKILL.md")


def test_swapping_the_roots_swaps_the_winner(fixture_tree: FixtureTree, registry: SkillRegistry) -> None:
    result = registry.list_skills(tree.configured(fixture_tree.user, fixture_tree.project))
    assert tree.by_name(result.model_dump(mode="json"))["shared-name"]["description"] == "The user's copy."
    clash = [e for e in result.errors if e.code == "name_clash"]
    assert [e.path for e in clash] == [str(fixture_tree.project / "shared-name" / "SKILL.md")]


def test_the_body_is_never_returned(listed: dict[str, Any]) -> None:
    assert "never returned" not in str(listed["skills"])


def test_query_matches_name_or_description_case_insensitively(
    fixture_tree: FixtureTree, registry: SkillRegistry
) -> None:
    result = registry.list_skills(tree.configured(fixture_tree.project, fixture_tree.user))
    assert [s.name for s in matching(result, "NESTED").skills] == ["nested-skill"]
    assert [s.name for s in matching(result, "every OPTIONAL").skills] == ["full-skill"]
    assert matching(result, "no skill has this").skills == []
    assert matching(result, "no skill has this").errors == result.errors
    assert matching(result, "") is result
    assert matching(result, None) is result


def test_missing_configured_root_is_reported_and_missing_default_is_not(tmp_path: Any) -> None:
    from colibri.domains.skills.roots import Root

    missing = tmp_path / "nowhere"
    configured = SkillRegistry().list_skills((Root(missing, configured=True),))
    assert [(e.code, e.path) for e in configured.errors] == [("root_missing", str(missing))]
    assert "COLIBRI_SKILLS_DIR" in configured.errors[0].reason
    default = SkillRegistry().list_skills((Root(missing, configured=False),))
    assert default.skills == [] and default.errors == []


def test_a_root_that_is_a_file_is_reported(tmp_path: Any) -> None:
    from colibri.domains.skills.roots import Root

    file_root = tmp_path / "file"
    file_root.write_text("not a folder")
    result = SkillRegistry().list_skills((Root(file_root, configured=False),))
    assert [e.code for e in result.errors] == ["root_not_directory"]
