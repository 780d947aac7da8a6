"""The skill registry served the standard way: the MCP Skills extension (SEP-2640).

Its identifier is `io.modelcontextprotocol/skills`.

Every file of a listed skill is a resource `skill://<name>/<path in the skill's folder>` (the skill's
`name` is the last segment of its path, as the SEP requires); `skills/list` and `skills/get` give each
skill's entry: the URI of its SKILL.md, its frontmatter rendered verbatim as JSON, and every file of
the folder with the SHA-256 of its raw bytes (`sha256:<64 hex>`). The skills are `skill_list`'s, the
same registry and roots; a folder's files are walked with the registry's limits (no symlink leading
out of the folder, no `.git` or `node_modules`, bounded depth and count). Plain Python: the MCP
adapter is runtime/skills_extension.py.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colibri.domains.skills.models import Skill, SkillList
from colibri.domains.skills.problems import SkillFileError

SCHEME = "skill://"
SKIPPED = frozenset({".git", "node_modules"})
MAX_DEPTH = 8
MAX_FILES = 1000
MAX_READ_BYTES = 8 * 1024 * 1024


class NotServed(LookupError):
    """The URI names no skill or file this server serves; the message says which are."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    uri: str
    path: Path
    digest: str  # sha256:<hex> of the raw bytes


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """One skill as `skills/list` and `skills/get` give it."""

    uri: str
    name: str
    description: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]

    def wire(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "frontmatter": self.frontmatter,
            "resources": [{"uri": f.uri, "digest": f.digest} for f in self.files],
        }


def entries(listing: SkillList) -> list[SkillEntry]:
    """The entries of the skills `skill_list` lists, in its order."""
    return [entry(skill) for skill in listing.skills]


def entry(skill: Skill) -> SkillEntry:
    folder = Path(skill.path).parent
    base = f"{SCHEME}{skill.name}"
    files = tuple(
        SkillFile(f"{base}/{relative}", path, file_digest(path)) for relative, path in _walk(folder)
    )
    return SkillEntry(
        f"{base}/SKILL.md", skill.name, skill.description, _frontmatter(Path(skill.path)), files
    )


def file_digest(path: Path) -> str:
    with path.open("rb") as stream:
        return "sha256:" + hashlib.file_digest(stream, "sha256").hexdigest()


def find(served: list[SkillEntry], uri: str) -> SkillEntry:
    """The entry whose SKILL.md `uri` names (`skills/get`)."""
    for candidate in served:
        if candidate.uri == uri:
            return candidate
    raise NotServed(f"{uri!r} is not a skill this server serves; skills/list gives the URIs of those it does")


def read(served: list[SkillEntry], uri: str) -> tuple[str, bytes]:
    """The MIME type and bytes of the skill file `uri` names, if it is still the file its digest promised."""
    for candidate in served:
        for served_file in candidate.files:
            if served_file.uri == uri:
                data = _read(served_file.path)
                mime = (
                    "text/markdown"
                    if uri == candidate.uri
                    else mimetypes.guess_type(served_file.path.name)[0]
                )
                return mime or "application/octet-stream", data
    raise NotServed(f"{uri!r} is no file of a skill this server serves; skills/list lists every one")


def _read(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_READ_BYTES:
        raise NotServed(
            f"{path.name} is {size} bytes; skill files over {MAX_READ_BYTES} bytes are not served"
        )
    return path.read_bytes()


def _walk(folder: Path) -> list[tuple[str, Path]]:
    """(path relative to the folder, with '/', absolute path) of every regular file in it, sorted."""
    root = os.path.realpath(folder)
    found: list[tuple[str, Path]] = []
    for current, dirs, names in os.walk(folder, followlinks=False):
        depth = Path(current).relative_to(folder).parts
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and len(depth) < MAX_DEPTH)
        for name in sorted(names):
            path = Path(current, name)
            real = os.path.realpath(path)
            if not (real == root or real.startswith(root + os.sep)) or not os.path.isfile(real):
                continue  # a symlink out of the folder, or not a regular file
            found.append((path.relative_to(folder).as_posix(), path))
            if len(found) >= MAX_FILES:
                return sorted(found)
    return sorted(found)


def _frontmatter(skill_md: Path) -> dict[str, Any]:
    """The SKILL.md frontmatter, every field as written, as JSON (dates and the like as text)."""
    from colibri.domains.skills.frontmatter import load, split  # PyYAML only once a skill is read

    try:
        fields = load(split(skill_md.read_bytes().decode("utf-8"))).fields
    except (OSError, UnicodeDecodeError, SkillFileError):
        return {}
    rendered: dict[str, Any] = json.loads(json.dumps({str(k): v for k, v in fields.items()}, default=str))
    return rendered
