"""Names as they are shown to a person: one function, used wherever a client-chosen name appears.

A name a client or a downstream chose may hold characters that change what a reader sees: C0/C1
controls (CR/LF start a forged line in a log or a table), bidirectional overrides and isolates
(U+202A-202E, U+2066-2069) and the directional marks (U+200E/F), which reorder the text around
them (`evil.\u202etxt.exe`). `shown` writes each as a visible escape (`\\u202e`, `\\n`), and a name
longer than `LONGEST_NAME` as its length and digest, so no page, row or line grows with it.
"""

from __future__ import annotations

import hashlib
import re

LONGEST_NAME = 256  # a client-chosen name longer than this is refused, and shown by its digest

_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def shown(name: str, longest: int = LONGEST_NAME) -> str:
    """`name` safe to show: controls and bidi characters escaped, and past `longest` characters
    `<name of N chars, sha256 HEX16>` instead (under 80 characters, whatever its length)."""
    if len(name) > longest:
        return f"<name of {len(name)} chars, sha256 {digest(name)[:16]}>"
    return _HIDDEN.sub(_escape, name)


def quoted(name: str) -> str:
    """`name` as a message quotes it: `'shown'`, or the length-and-digest form, which needs no quotes."""
    return shown(name) if too_long(name) else f"'{shown(name)}'"


def digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


def too_long(name: str) -> bool:
    """Whether a client-chosen name is longer than any name the switchboard serves may be."""
    return len(name) > LONGEST_NAME
