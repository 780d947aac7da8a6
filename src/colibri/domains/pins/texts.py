"""A pinned and a seen definition as a person reads them: the fields that differ, and a unified
diff of the two as pretty JSON (SPEC §21).

A definition is a downstream's text, written to mislead whoever reads it: besides the controls
JSON escapes itself, the characters that hide or reorder what a reader sees (bidi overrides and
isolates, zero-width and other format characters, the invisible tag characters, line and paragraph
separators, C1 controls, private-use and unassigned code points) are written as JSON escapes
(`\\u202e`), so a terminal or a page shows them instead of obeying them. The text stays valid JSON.
"""

from __future__ import annotations

import difflib
import json
import unicodedata
from typing import Any

# The order `pins list` names the fields in: a tool's definition as the protocol lists them.
FIELDS = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "_meta",
    "execution",
)
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})


def changed_fields(pinned: str, seen: str) -> list[str]:
    """The top-level fields whose values differ (added and removed ones too), in FIELDS order."""
    before, after = _fields(pinned), _fields(seen)
    differing = {key for key in before.keys() | after.keys() if before.get(key, ...) != after.get(key, ...)}
    known = [field for field in FIELDS if field in differing]
    return known + sorted(differing - set(FIELDS))


def pretty(text: str) -> list[str]:
    """A definition's JSON text as indented lines, keys sorted, hidden characters escaped."""
    written = json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False)
    # Escaped before it is split, and split at "\n" only (json.dumps writes one only to end a
    # line): str.splitlines() would also break a string at U+0085 or U+2028, forging a diff line.
    return _visible(written, keep="\n").split("\n")


def unified_diff(tool: str, pinned: tuple[str, str], seen: tuple[str, str]) -> str:
    """The unified diff from the pinned (sha256, text) to the seen one, with both digests."""
    (pinned_sha256, pinned_text), (seen_sha256, seen_text) = pinned, seen
    lines = difflib.unified_diff(
        pretty(pinned_text),
        pretty(seen_text),
        f"{_visible(tool)} pinned sha256 {pinned_sha256}",
        f"{_visible(tool)} listed sha256 {seen_sha256}",
        lineterm="",
    )
    return "\n".join(lines)


def _fields(text: str) -> dict[str, Any]:
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


def _visible(text: str, keep: str = "") -> str:
    """`text` with its hidden characters escaped, but for those in `keep`."""
    if text.isascii() and "".join(text.split(keep) if keep else text).isprintable():
        return text
    return "".join(
        _escaped(char) if char not in keep and unicodedata.category(char) in _HIDDEN_CATEGORIES else char
        for char in text
    )


def _escaped(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # as JSON writes a character past the BMP: a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
