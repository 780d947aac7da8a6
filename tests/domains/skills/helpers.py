"""The fixture tree: two skill roots written on disk, one folder per case the spec gives a behaviour.

Every case is named by its folder, so tests look results up by name rather than by position.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colibri.domains.skills.roots import Root

NAME_64 = "a" * 63 + "b"
NAME_65 = "a" * 64 + "b"

FULL_SKILL = """\
---
name: full-skill
description: Uses every optional field of the Agent Skills format.
license: Apache-2.0
compatibility: Needs git and Python 3.11 or newer
metadata:
  author: colibri-tests
  version: "1.0"
allowed-tools: Bash(git:*) Read
---
# Full skill

The body is Markdown and is never returned.
"""


def frontmatter(fields: str, body: str = "# Body\n") -> str:
    return f"---\n{fields.strip()}\n---\n{body}"


def write_skill(root: Path, folder: str, text: str | bytes) -> Path:
    """Write `root/folder/SKILL.md` (folder may be nested, e.g. 'group/skill') and return its path."""
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def valid(name: str, description: str = "A valid skill for the tests.") -> str:
    return frontmatter(f"name: {name}\ndescription: {description}")


@dataclass(frozen=True)
class FixtureTree:
    project: Path  # the first root
    user: Path  # the second root
    outside: Path  # a folder outside both roots that symlinks point into

    @property
    def skills_dir(self) -> str:
        return os.pathsep.join([str(self.project), str(self.user)])


# folder (under the project root) -> SKILL.md text; each is one case of the spec.
PROJECT_CASES: dict[str, str | bytes] = {
    "full-skill": FULL_SKILL,
    "minimal-skill": valid("minimal-skill"),
    "folder-differs": valid("name-differs"),
    "no-description": frontmatter("name: no-description"),
    "broken-yaml": frontmatter("name: broken-yaml\ndescription: [never closed"),
    "unquoted-colon": frontmatter("name: unquoted-colon\ndescription: Use it for: PDF files"),
    "metadata-types": frontmatter(
        "name: metadata-types\ndescription: Metadata values that YAML does not read as strings.\n"
        "metadata:\n  version: 1.10\n  stable: yes\n  released: 2024-01-02\n  build: 7\n"
        "  empty:\n  label: plain text\n  tags: [a, b]"
    ),
    NAME_64: valid(NAME_64),
    NAME_65: valid(NAME_65),
    "-leading-hyphen": valid("-leading-hyphen"),
    "trailing-hyphen-": valid("trailing-hyphen-"),
    "double--hyphen": valid("double--hyphen"),
    "Uppercase": valid("Uppercase"),
    "empty-file": b"",
    "no-frontmatter": "# Just Markdown\n\nname: no-frontmatter\n",
    "too-large": frontmatter("name: too-large\ndescription: Far too big.", "x" * (2 * 1024 * 1024)),
    "group/nested-skill": valid("nested-skill"),
    "l1/l2/at-bound": valid("at-bound"),
    "l1/l2/l3/too-deep": valid("too-deep"),
    "full-skill/references/inner-skill": valid("inner-skill"),
    ".git/in-git": valid("in-git"),
    "node_modules/in-node-modules": valid("in-node-modules"),
    "shared-name": valid("shared-name", "The project's copy."),
}

USER_CASES: dict[str, str | bytes] = {
    "shared-name": valid("shared-name", "The user's copy."),
    "user-only": valid("user-only"),
}

# Which project/user folders end up in `skills`, by skill name.
LISTED = {
    "full-skill",
    "minimal-skill",
    "name-differs",
    "metadata-types",
    NAME_64,
    "nested-skill",
    "at-bound",
    "shared-name",
    "user-only",
}

# Path (relative to its root) -> (code, words the reason must contain).
PROJECT_ERRORS = {
    "no-description/SKILL.md": ("missing_description", ["no `description`", "what the skill does"]),
    "broken-yaml/SKILL.md": ("invalid_yaml", ["not valid YAML", "line"]),
    "unquoted-colon/SKILL.md": ("invalid_yaml", ["line 3", "must be quoted"]),
    f"{NAME_65}/SKILL.md": ("invalid_name", ["65 characters", "limit is 64"]),
    "-leading-hyphen/SKILL.md": ("invalid_name", ["ends with a hyphen", "`name: leading-hyphen`"]),
    "trailing-hyphen-/SKILL.md": ("invalid_name", ["ends with a hyphen", "`name: trailing-hyphen`"]),
    "double--hyphen/SKILL.md": ("invalid_name", ["consecutive hyphens", "`name: double-hyphen`"]),
    "Uppercase/SKILL.md": ("invalid_name", ["uppercase", "`name: uppercase`"]),
    "empty-file/SKILL.md": ("empty_file", ["empty", "---"]),
    "no-frontmatter/SKILL.md": ("no_frontmatter", ["first line must be '---'"]),
    "too-large/SKILL.md": ("too_large", ["1 MiB"]),
    "l1/l2/l3/too-deep": ("too_deep", ["4 levels", "at most 3"]),
    "link-out": ("symlink_outside_root", ["outside the skills root", "COLIBRI_SKILLS_DIR"]),
    "file-link/SKILL.md": ("symlink_outside_root", ["outside its skills root"]),
}
USER_ERRORS = {
    "shared-name/SKILL.md": ("name_clash", ["'shared-name'", "project-skills/shared-name/SKILL.md"]),
}


def build(base: Path) -> FixtureTree:
    tree = FixtureTree(project=base / "project-skills", user=base / "user-skills", outside=base / "outside")
    for folder, text in PROJECT_CASES.items():
        write_skill(tree.project, folder, text)
    for folder, text in USER_CASES.items():
        write_skill(tree.user, folder, text)
    write_skill(tree.outside, "escaped", valid("escaped"))
    (tree.project / "link-out").symlink_to(tree.outside / "escaped", target_is_directory=True)
    (tree.project / "file-link").mkdir()
    (tree.project / "file-link" / "SKILL.md").symlink_to(tree.outside / "escaped" / "SKILL.md")
    return tree


def configured(*paths: Path) -> tuple[Root, ...]:
    """Roots as COLIBRI_SKILLS_DIR would give them."""
    return tuple(Root(path, configured=True) for path in paths)


def by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {skill["name"]: skill for skill in data["skills"]}


def errors_by_path(data: dict[str, Any], root: Path) -> dict[str, dict[str, Any]]:
    """Errors keyed by their path relative to `root` ('broken-yaml/SKILL.md', 'l1/l2/l3/too-deep')."""
    found = {}
    for error in data["errors"]:
        path = Path(error["path"])
        if path.is_relative_to(root):
            found[path.relative_to(root).as_posix()] = error
    return found
