"""Find SKILL.md files under the roots, in order, without wandering off.

A skill is a folder holding `SKILL.md`; its own sub-folders (scripts, references, ...) are not
searched. Skill folders are found at most `MAX_DEPTH` levels below a root (1 = a direct child, so
`root/group/sub-group/skill` is the deepest). `.git` and `node_modules` are skipped; a symlink is
followed only when its target stays inside the root and is not one of its own ancestors.
Every directory listed is recorded as a `DirWatch`, so the cache can tell when one gains or
loses an entry.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from colibri.domains.skills.freshness import DirWatch, signature
from colibri.domains.skills.models import SkillProblem
from colibri.domains.skills.problems import ProblemCode
from colibri.domains.skills.roots import Root

MAX_DEPTH = 3
SKIPPED_DIRS = frozenset({".git", "node_modules"})
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A SKILL.md to read: its path as reached under the root, its folder's name, the root's real path."""

    path: str
    folder: str
    root_real: str


@dataclass(slots=True)
class Discovery:
    """What a walk found, in scan order: candidates and problems interleaved as met."""

    found: list[Candidate | SkillProblem] = field(default_factory=list)
    watches: list[DirWatch] = field(default_factory=list)


def within(path_real: str, root_real: str) -> bool:
    """True when the real path `path_real` is `root_real` or lies under it."""
    prefix = root_real if root_real.endswith(os.sep) else root_real + os.sep
    return path_real == root_real or path_real.startswith(prefix)


def discover(roots: tuple[Root, ...], clock: Callable[[], int]) -> Discovery:
    out = Discovery()
    seen: set[str] = set()
    for root in roots:
        _Walk(root, out, clock).run(seen)
    return out


class _Walk:
    def __init__(self, root: Root, out: Discovery, clock: Callable[[], int]) -> None:
        self.root = root
        self.root_path = str(root.path)
        self.root_real = ""
        self.out = out
        self.clock = clock

    def run(self, seen: set[str]) -> None:
        observed = self.clock()
        sig = signature(self.root_path)
        if sig is None or not stat.S_ISDIR(sig[2]):
            self.out.watches.append(DirWatch(self.root_path, sig, None, observed))
            self._root_problem(sig)
            return
        self.root_real = os.path.realpath(self.root_path)
        if self.root_real in seen:  # the same folder reached twice (cwd == HOME, a repeated entry, a link)
            self.out.watches.append(DirWatch(self.root_path, sig, None, observed))
            return
        seen.add(self.root_real)
        if os.path.lexists(os.path.join(self.root_path, SKILL_FILE)):  # the root is itself one skill
            self.out.watches.append(DirWatch(self.root_path, sig, None, observed))
            self._candidate(self.root_path)
            return
        self._visit(self.root_path, self.root_real, 0, (self.root_real,))

    def _root_problem(self, sig: object) -> None:
        if sig is None and self.root.configured:
            self._problem(
                self.root_path,
                "root_missing",
                "this skills folder (from COLIBRI_SKILLS_DIR) does not exist; create it or correct "
                "the variable",
            )
        elif sig is not None:
            self._problem(
                self.root_path, "root_not_directory", "this skills root is not a folder; point it at one"
            )

    def _visit(self, path: str, real: str, depth: int, ancestors: tuple[str, ...]) -> None:
        observed = self.clock()
        sig = signature(path)
        try:
            with os.scandir(path) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            self.out.watches.append(DirWatch(path, sig, None, observed))
            self._problem(
                path, "unreadable", f"this folder cannot be listed ({exc.strerror}); fix its permissions"
            )
            return
        self.out.watches.append(DirWatch(path, sig, frozenset(entry.name for entry in entries), observed))
        for entry in entries:
            if entry.name not in SKIPPED_DIRS:
                self._entry(entry, real, depth + 1, ancestors)

    def _entry(
        self, entry: os.DirEntry[str], parent_real: str, depth: int, ancestors: tuple[str, ...]
    ) -> None:
        is_link = entry.is_symlink()
        if not entry.is_dir():
            if is_link:  # a dangling or file link may start leading to a folder without its parent changing
                self.out.watches.append(DirWatch(entry.path, signature(entry.path), None, self.clock()))
            return
        if depth > MAX_DEPTH:
            self._problem(
                entry.path,
                "too_deep",
                f"this folder is {depth} levels below the skills root {self.root_path}; skills are "
                f"searched at most {MAX_DEPTH} levels deep, so move any skill in it higher up",
            )
            return
        real = os.path.realpath(entry.path) if is_link else os.path.join(parent_real, entry.name)
        if is_link and not within(real, self.root_real):
            self._problem(
                entry.path,
                "symlink_outside_root",
                f"this symlink leads to {real}, outside the skills root {self.root_path}; copy the "
                "skill into the root or add its folder to COLIBRI_SKILLS_DIR",
            )
            return
        if real in ancestors:
            self._problem(
                entry.path, "symlink_loop", f"this symlink leads back to {real}, a folder above it; remove it"
            )
            return
        if os.path.lexists(os.path.join(entry.path, SKILL_FILE)):
            self._candidate(entry.path)
        else:
            self._visit(entry.path, real, depth, (*ancestors, real))

    def _candidate(self, folder_path: str) -> None:
        path = os.path.join(folder_path, SKILL_FILE)
        self.out.found.append(Candidate(path, os.path.basename(folder_path), self.root_real))

    def _problem(self, path: str, code: ProblemCode, reason: str) -> None:
        self.out.found.append(SkillProblem(path=path, code=code, reason=reason))
