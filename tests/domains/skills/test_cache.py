"""The cache: repeated calls are cheap, and an added, edited or removed skill shows in the next call."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from colibri.domains.skills import registry as registry_module
from colibri.domains.skills.freshness import RACY_WINDOW_NS, FileWatch, digest, is_racy, signature
from colibri.domains.skills.models import Skill, SkillList
from colibri.domains.skills.registry import SkillRegistry
from colibri.domains.skills.roots import Root
from colibri.domains.skills.validate import parse_skill
from tests.domains.skills.helpers import configured, valid, write_skill


class ParseCounter:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = parse_skill

        def counting(content: bytes, path: str, folder: str) -> Skill:
            self.calls += 1
            return real(content, path, folder)

        monkeypatch.setattr(registry_module, "parse_skill", counting)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> ParseCounter:
    return ParseCounter(monkeypatch)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for name in ("alpha", "beta", "gamma"):
        write_skill(root, name, valid(name))
    return root


def names(result: SkillList) -> list[str]:
    return [skill.name for skill in result.skills]


def test_an_unchanged_tree_is_served_from_the_cache(root: Path, parses: ParseCounter) -> None:
    registry = SkillRegistry()
    first = registry.list_skills(configured(root))
    assert parses.calls == 3
    assert registry.list_skills(configured(root)) is first
    assert registry.list_skills(configured(root)) is first
    assert parses.calls == 3


def test_added_edited_and_deleted_skills_show_in_the_next_call(root: Path, parses: ParseCounter) -> None:
    registry = SkillRegistry()
    roots = configured(root)
    assert names(registry.list_skills(roots)) == ["alpha", "beta", "gamma"]

    write_skill(root, "delta", valid("delta"))
    assert names(registry.list_skills(roots)) == ["alpha", "beta", "delta", "gamma"]
    assert parses.calls == 4  # only the new file was parsed

    write_skill(root, "alpha", valid("alpha", "A changed description."))
    assert registry.list_skills(roots).skills[0].description == "A changed description."
    assert parses.calls == 5

    (root / "beta" / "SKILL.md").unlink()
    assert names(registry.list_skills(roots)) == ["alpha", "delta", "gamma"]
    shutil.rmtree(root / "gamma")
    assert names(registry.list_skills(roots)) == ["alpha", "delta"]
    assert parses.calls == 5


def test_an_edit_of_the_same_size_is_seen(root: Path) -> None:
    registry = SkillRegistry()
    path = root / "alpha" / "SKILL.md"
    before = registry.list_skills(configured(root))
    assert before.skills[0].description == "A valid skill for the tests."
    stat = path.stat()
    path.write_text(valid("alpha", "A VALID SKILL FOR THE TESTS."))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # as if written within the same tick
    assert registry.list_skills(configured(root)).skills[0].description == "A VALID SKILL FOR THE TESTS."


def test_a_file_turning_invalid_and_back(root: Path) -> None:
    registry = SkillRegistry()
    path = root / "beta" / "SKILL.md"
    path.write_text("---\nname: beta\ndescription: broken: yaml\n---\n")
    assert [e.code for e in registry.list_skills(configured(root)).errors] == ["invalid_yaml"]
    path.write_text(valid("beta") + "x" * (1024 * 1024))
    assert [e.code for e in registry.list_skills(configured(root)).errors] == ["too_large"]
    path.write_text(valid("beta"))
    result = registry.list_skills(configured(root))
    assert result.errors == [] and names(result) == ["alpha", "beta", "gamma"]


def test_a_skill_added_in_a_new_group_folder_is_found(root: Path) -> None:
    registry = SkillRegistry()
    registry.list_skills(configured(root))
    write_skill(root, "group/sub/deep-one", valid("deep-one"))
    assert "deep-one" in names(registry.list_skills(configured(root)))


def test_a_root_created_after_the_first_call_is_found(tmp_path: Path) -> None:
    registry = SkillRegistry()
    later = tmp_path / "later"
    assert [e.code for e in registry.list_skills(configured(later)).errors] == ["root_missing"]
    write_skill(later, "late", valid("late"))
    result = registry.list_skills(configured(later))
    assert names(result) == ["late"] and result.errors == []


def test_a_deleted_root_empties_the_list(root: Path) -> None:
    registry = SkillRegistry()
    registry.list_skills((Root(root, configured=False),))
    shutil.rmtree(root)
    assert registry.list_skills((Root(root, configured=False),)) == SkillList(skills=[], errors=[])


def test_new_roots_are_scanned_at_once(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write_skill(other, "alpha", valid("alpha", "The other alpha."))
    registry = SkillRegistry()
    assert registry.list_skills(configured(root)).skills[0].description == "A valid skill for the tests."
    assert registry.list_skills(configured(other, root)).skills[0].description == "The other alpha."


def test_retargeting_a_symlink_out_of_the_root_is_seen(root: Path, tmp_path: Path) -> None:
    write_skill(tmp_path / "outside", "linked", valid("linked"))
    write_skill(root, "store/linked", valid("linked"))
    link = root / "linked"
    link.symlink_to(root / "store" / "linked", target_is_directory=True)
    registry = SkillRegistry()
    assert "linked" in names(registry.list_skills(configured(root)))
    link.unlink()
    link.symlink_to(tmp_path / "outside" / "linked", target_is_directory=True)
    result = registry.list_skills(configured(root))
    assert [(e.code, e.path) for e in result.errors] == [("symlink_outside_root", str(link))]
    assert "linked" in names(result)  # the copy under store/ still counts


def test_a_dangling_symlink_that_starts_to_resolve_is_seen(root: Path) -> None:
    target = root / "alpha" / "assets" / "hidden"  # inside a skill folder, which is never listed
    (root / "hidden").symlink_to(target, target_is_directory=True)
    registry = SkillRegistry()
    assert names(registry.list_skills(configured(root))) == ["alpha", "beta", "gamma"]
    write_skill(root / "alpha" / "assets", "hidden", valid("hidden"))
    assert "hidden" in names(registry.list_skills(configured(root)))


def test_a_symlink_loop_is_reported_once(root: Path) -> None:
    (root / "group").mkdir()
    (root / "group" / "up").symlink_to(root, target_is_directory=True)
    result = SkillRegistry().list_skills(configured(root))
    assert [(e.code, e.path) for e in result.errors] == [("symlink_loop", str(root / "group" / "up"))]
    assert names(result) == ["alpha", "beta", "gamma"]


def test_a_link_inside_the_root_is_followed_and_reported_as_a_clash(root: Path) -> None:
    (root / "alias").symlink_to(root / "alpha", target_is_directory=True)
    result = SkillRegistry().list_skills(configured(root))
    assert names(result) == ["alpha", "beta", "gamma"]
    assert [(e.code, e.path) for e in result.errors] == [("name_clash", str(root / "alpha" / "SKILL.md"))]


def test_overlapping_roots_report_the_second_sighting(root: Path) -> None:
    result = SkillRegistry().list_skills(configured(root, root / "alpha"))
    assert names(result) == ["alpha", "beta", "gamma"]
    [clash] = result.errors
    assert clash.code == "name_clash" and "roots overlap" in clash.reason


def test_a_root_that_is_itself_a_skill_folder(root: Path) -> None:
    result = SkillRegistry().list_skills(configured(root / "beta"))
    assert names(result) == ["beta"]


def test_racy_signatures_are_only_trusted_after_a_content_check(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"now")
    sig = signature(str(path))
    assert sig is not None
    recent = max(sig[4], sig[5])
    assert is_racy(sig, recent + RACY_WINDOW_NS)
    assert not is_racy(sig, recent + RACY_WINDOW_NS + 1)
    stale_digest = digest(b"before")
    # Same signature, different bytes: a racy watch reads the file and notices...
    assert not FileWatch(str(path), sig, stale_digest, observed_at=recent).fresh(now=recent)
    # ...an old enough one trusts the signature alone (what keeps warm calls cheap).
    assert FileWatch(str(path), sig, stale_digest, observed_at=recent + 10 * RACY_WINDOW_NS).fresh(now=0)
    racy = FileWatch(str(path), sig, digest(b"now"), observed_at=recent)
    assert racy.fresh(now=recent + 5) and racy.observed_at == recent + 5
