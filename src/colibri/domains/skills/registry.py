"""The skill registry: scan the roots, read and validate each SKILL.md, settle name clashes,
and keep the result for as long as every file and folder it came from is unchanged.

A call on an unchanged tree costs one stat per listed folder and per SKILL.md; after a change
the tree is walked again, but only files whose signature or bytes changed are parsed again.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from colibri.domains.skills.discovery import Candidate, discover, within
from colibri.domains.skills.freshness import DirWatch, FileWatch, Signature, digest, read_regular, signature
from colibri.domains.skills.models import Skill, SkillList, SkillProblem
from colibri.domains.skills.problems import SkillFileError
from colibri.domains.skills.roots import Root
from colibri.domains.skills.validate import parse_skill

MAX_FILE_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class _FileResult:
    watch: FileWatch
    outcome: Skill | SkillProblem


@dataclass(frozen=True, slots=True)
class _Snapshot:
    roots: tuple[Root, ...]
    result: SkillList
    dirs: list[DirWatch]
    files: list[FileWatch]

    def fresh(self, now: int) -> bool:
        return all(watch.fresh(now) for watch in self.dirs) and all(watch.fresh(now) for watch in self.files)


class SkillRegistry:
    """Lists the skills under some roots; repeated calls are cheap and never stale.

    `clock` returns wall-clock nanoseconds (comparable with file timestamps); tests inject it.
    """

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._snapshot: _Snapshot | None = None
        self._files: dict[str, _FileResult] = {}

    def list_skills(self, roots: tuple[Root, ...]) -> SkillList:
        with self._lock:
            snapshot = self._snapshot
            if snapshot is None or snapshot.roots != roots or not snapshot.fresh(self._clock()):
                snapshot = self._snapshot = self._scan(roots)
            return snapshot.result

    def _scan(self, roots: tuple[Root, ...]) -> _Snapshot:
        discovery = discover(roots, self._clock)
        files: dict[str, _FileResult] = {}
        skills: dict[str, Skill] = {}
        errors: list[SkillProblem] = []
        for item in discovery.found:
            if isinstance(item, SkillProblem):
                errors.append(item)
                continue
            loaded = files[item.path] = self._load(item)
            outcome = loaded.outcome
            if isinstance(outcome, SkillProblem):
                errors.append(outcome)
            elif outcome.name in skills:
                errors.append(_clash(outcome, skills[outcome.name]))
            else:
                skills[outcome.name] = outcome
        self._files = files
        result = SkillList(skills=sorted(skills.values(), key=lambda skill: skill.name), errors=errors)
        return _Snapshot(roots, result, discovery.watches, [loaded.watch for loaded in files.values()])

    def _load(self, candidate: Candidate) -> _FileResult:
        observed = self._clock()
        path = candidate.path
        try:
            _refuse_outside_link(path, candidate.root_real)
            sig = _checked_signature(path)
        except SkillFileError as exc:
            return _FileResult(FileWatch(path, signature(path), None, observed), _problem(path, exc))
        previous = self._files.get(path)
        if previous is not None and previous.watch.trusted(sig):
            return previous
        try:
            content = _read(path)
        except SkillFileError as exc:
            return _FileResult(FileWatch(path, sig, None, observed), _problem(path, exc))
        content_digest = digest(content)
        watch = FileWatch(path, sig, content_digest, observed)
        if previous is not None and previous.watch.content_digest == content_digest:
            return _FileResult(watch, previous.outcome)
        try:
            outcome: Skill | SkillProblem = parse_skill(content, path, candidate.folder)
        except SkillFileError as exc:
            outcome = _problem(path, exc)
        return _FileResult(watch, outcome)


def matching(result: SkillList, query: str | None) -> SkillList:
    """The skills whose name or description contains `query` (case-insensitive); errors unfiltered."""
    if not query:
        return result
    needle = query.casefold()
    kept = [s for s in result.skills if needle in s.name.casefold() or needle in s.description.casefold()]
    return SkillList(skills=kept, errors=result.errors)


def _refuse_outside_link(path: str, root_real: str) -> None:
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:  # it vanished since the walk saw it; the folder's watch will notice
        raise SkillFileError("unreadable", f"this SKILL.md cannot be read ({exc.strerror})") from None
    if stat.S_ISLNK(mode) and not within(real := os.path.realpath(path), root_real):
        raise SkillFileError(
            "symlink_outside_root",
            f"this SKILL.md is a symlink to {real}, outside its skills root; copy the file into the skill "
            "folder instead",
        )


def _checked_signature(path: str) -> Signature:
    sig = signature(path)
    if sig is None:
        raise SkillFileError(
            "unreadable", "this SKILL.md cannot be opened (a broken symlink, or no permission)"
        )
    if not stat.S_ISREG(sig[2]):
        raise SkillFileError(
            "not_a_file", "SKILL.md here is not a regular file; it must be the skill's Markdown file"
        )
    if sig[3] > MAX_FILE_BYTES:
        raise SkillFileError("too_large", _too_large(sig[3]))
    return sig


def _read(path: str) -> bytes:
    try:
        content = read_regular(path, MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SkillFileError("unreadable", f"this SKILL.md cannot be read ({exc.strerror})") from None
    if content is None:  # replaced by a FIFO, a device or a folder since it was measured
        raise SkillFileError(
            "not_a_file", "SKILL.md here is not a regular file; it must be the skill's Markdown file"
        )
    if len(content) > MAX_FILE_BYTES:  # it grew after it was measured
        raise SkillFileError("too_large", _too_large(len(content)))
    return content


def _too_large(size: int) -> str:
    return (
        f"this SKILL.md is {size:,} bytes; files over 1 MiB ({MAX_FILE_BYTES:,} bytes) are skipped "
        "- keep the frontmatter and instructions short and move long material into files beside it"
    )


def _problem(path: str, exc: SkillFileError) -> SkillProblem:
    return SkillProblem(path=path, code=exc.code, reason=exc.reason)


def _clash(loser: Skill, winner: Skill) -> SkillProblem:
    if loser.path == winner.path:
        reason = (
            f"this SKILL.md ({loser.name!r}) was already listed through an earlier root; the roots overlap"
        )
    else:
        reason = (
            f"skill name {loser.name!r} is already taken by {winner.path} (an earlier root, or an "
            "earlier path in the same root, wins); rename one of them to list both"
        )
    return SkillProblem(path=loser.path, code="name_clash", reason=reason)
