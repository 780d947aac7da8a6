"""Where skills live: `COLIBRI_SKILLS_DIR` if set, else the project's and the user's skill folders."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from colibri.core.env import path_list

SKILLS_DIR_VARIABLE = "COLIBRI_SKILLS_DIR"
PROJECT_ROOTS = (Path(".agents/skills"), Path(".claude/skills"))
USER_ROOT = Path(".agents/skills")


@dataclass(frozen=True, slots=True)
class Root:
    """One skills folder, absolute; `configured` roots were named explicitly, so a missing one is reported."""

    path: Path
    configured: bool


def roots(
    env: Mapping[str, str] | None = None, cwd: Path | None = None, home: Path | None = None
) -> tuple[Root, ...]:
    """The roots that `env` configures, parsed as `Config` parses them; the server passes its Config's."""
    env = os.environ if env is None else env
    configured = path_list(env, SKILLS_DIR_VARIABLE)
    if home is None:
        home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return roots_from(configured, Path.cwd() if cwd is None else cwd, home)


def roots_from(configured: Sequence[Path] | None, cwd: Path, home: Path) -> tuple[Root, ...]:
    """The roots for parsed configuration (`Config.skills_dirs`); a duplicate keeps its first place."""
    if configured is not None:
        candidates = [Root(_absolute(path, cwd, home), configured=True) for path in configured]
    else:
        candidates = [Root(cwd / path, configured=False) for path in PROJECT_ROOTS]
        candidates.append(Root(home / USER_ROOT, configured=False))
    unique: dict[Path, Root] = {}
    for root in candidates:
        unique.setdefault(Path(os.path.abspath(root.path)), root)
    return tuple(Root(path, root.configured) for path, root in unique.items())


def _absolute(path: Path, cwd: Path, home: Path) -> Path:
    # MCP clients pass env values without a shell, so "~/skills" arrives unexpanded.
    if path.parts and path.parts[0] == "~":
        path = home.joinpath(*path.parts[1:])
    return path if path.is_absolute() else cwd / path
