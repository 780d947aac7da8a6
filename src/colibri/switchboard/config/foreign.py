"""Top-level keys that other MCP clients keep in the same file (SPEC §14: configs people have load).

Claude Desktop's `claude_desktop_config.json` holds `globalShortcut`, `preferences` and more beside
`mcpServers`; a switchboard pointed at that file should serve its servers, not refuse the file. So a
top-level key the switchboard does not read is set aside with one warning line — unless it is a
near miss of one it does read (`fallback`, `helth`): a typo that silently dropped a whole section
would be worse than a refusal. Keys inside `mcpServers` entries and inside the switchboard's own
sections are still checked strictly (schema.py).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable
from typing import Any

from colibri.switchboard.base import ConfigError

log = logging.getLogger("colibri.switchboard")

NEAR_MISS = 0.75  # difflib's ratio above which a key reads as a typo of one of ours


def set_aside(raw: dict[str, Any], ours: Iterable[str]) -> dict[str, Any]:
    """`raw` without the top-level keys the switchboard does not read (warned about once); a near
    miss of one of `ours` is a `ConfigError` with a did-you-mean."""
    known = tuple(ours)
    foreign = [key for key in raw if key not in known]
    for key in foreign:
        close = difflib.get_close_matches(key, known, n=1, cutoff=NEAR_MISS)
        if close:
            raise ConfigError(
                "$", f"unknown key {key!r}; did you mean {close[0]!r}? expected one of: {', '.join(known)}"
            )
    if foreign:
        log.warning(
            "ignoring top-level key(s) %s: the switchboard reads only %s (other MCP clients' settings "
            "may share the file)",
            ", ".join(repr(key) for key in foreign),
            ", ".join(known),
        )
    return {key: value for key, value in raw.items() if key in known}
