"""Why a SKILL.md (or a folder) was left out of the list.

SkillFileError      one skill file could not be accepted; becomes an entry of `errors`

Problems are data, not failures: `skill_list` reports them next to the skills it could read,
so one broken file never hides the others.
"""

from __future__ import annotations

from typing import Literal

ProblemCode = Literal[
    "root_missing",
    "root_not_directory",
    "unreadable",
    "too_large",
    "not_a_file",
    "not_utf8",
    "empty_file",
    "no_frontmatter",
    "unterminated_frontmatter",
    "invalid_yaml",
    "invalid_frontmatter",
    "missing_name",
    "invalid_name",
    "missing_description",
    "invalid_description",
    "invalid_field",
    "name_clash",
    "symlink_outside_root",
    "symlink_loop",
    "too_deep",
]


class SkillFileError(Exception):
    """A skill file or folder that is skipped; `reason` says what is wrong and how to fix it."""

    def __init__(self, code: ProblemCode, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code: ProblemCode = code
        self.reason = reason
