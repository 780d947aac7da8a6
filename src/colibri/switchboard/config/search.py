"""`"tool_search": {"mode": "search" | "off", "keep": [globs]}` (SPEC §23), checked key by key.

In search mode a session lists `find_tools` and `call_tool` and the tools `keep` names (globs over
the listed names: `server.tool`, a fallback capability, `switchboard_status`), not every tool.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from colibri.switchboard.base import ConfigError, json_path

FIND_TOOLS = "find_tools"
CALL_TOOL = "call_tool"
KEYS = ("mode", "keep")
MODES = ("search", "off")


@dataclass(frozen=True, slots=True)
class ToolSearch:
    """How tools/list is answered: every tool (`off`), or the two search tools and `keep`."""

    mode: Literal["search", "off"] = "off"
    keep: tuple[str, ...] = ()

    @property
    def on(self) -> bool:
        return self.mode == "search"

    def keeps(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.keep)


def tool_search(raw: Any, capabilities: Iterable[str]) -> ToolSearch:
    """The `tool_search` section, or a ConfigError naming the JSON path of its first problem."""
    if raw is None:
        return ToolSearch()
    if not isinstance(raw, dict):
        raise ConfigError(
            "tool_search",
            f'expected an object {{"mode": "search" | "off", "keep": [globs]}}, got {_kind(raw)}',
        )
    for key in raw:
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError("tool_search", f"unknown key {key!r}; {hint}expected one of: {', '.join(KEYS)}")
    mode = raw.get("mode", "off")
    if mode not in MODES:
        raise ConfigError(
            json_path(("tool_search", "mode")), f'expected "search" or "off", got {_shown(mode)}'
        )
    keep = raw.get("keep", [])
    if not isinstance(keep, list):
        raise ConfigError(
            json_path(("tool_search", "keep")),
            f'expected a list of globs such as "colibri.*", got {_kind(keep)}',
        )
    for index, pattern in enumerate(keep):
        if not isinstance(pattern, str) or not pattern.strip():
            raise ConfigError(
                json_path(("tool_search", "keep", index)),
                'expected a non-empty glob over listed names (e.g. "server.*", "server.tool"), '
                f"got {_shown(pattern)}",
            )
    if mode == "search":
        for name in capabilities:
            if name in (FIND_TOOLS, CALL_TOOL):
                raise ConfigError(
                    json_path(("fallbacks", name)),
                    f'{name!r} is the switchboard\'s own tool while "tool_search" is on; '
                    "name the capability otherwise",
                )
    return ToolSearch(mode=mode, keep=tuple(keep))


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", dict: "an object", type(None): "null"}.get(
        type(value), "a number"
    )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
