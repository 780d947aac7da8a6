"""Wrapping a title into the lines of a graph box at word boundaries, with an ellipsis for the rest.

SVG text does not wrap, and the server lays the graph out, so it estimates how wide a text is
from per-character widths of a 12 px sans-serif face, erring wide. A title is cut only between
words; a word wider than a whole line (a long identifier) is the one thing cut inside, and the
ellipsis says so.
"""

from __future__ import annotations

import unicodedata

ELLIPSIS = "…"
_NARROW = frozenset("ijlI.,:;'|!()[]{}` ")
_SLIM = frozenset('frt-/\\"*')
_WIDE = frozenset("mwMW@%&")


def char_width(ch: str) -> float:
    """Pixels of one character at 12 px, estimated on the wide side."""
    if ch in _NARROW:
        return 3.5
    if ch in _SLIM:
        return 4.5
    if ch in _WIDE:
        return 10.5
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 12.0
    return 8.0 if ch.isupper() else 7.0


def text_width(text: str) -> float:
    return sum(char_width(ch) for ch in text)


def wrap_words(text: str, width: float, lines: int) -> tuple[str, ...]:
    """`text` in at most `lines` lines of at most `width` pixels, broken between words; the last
    line ends in an ellipsis when words were left out."""
    words = text.split()
    out: list[str] = []
    while words and len(out) < lines:
        line, words = _fill(words, width)
        out.append(line)
    if words and out:
        out[-1] = _with_ellipsis(out[-1], width)
    return tuple(out)


def _fill(words: list[str], width: float) -> tuple[str, list[str]]:
    """The words that fit on one line, and the rest; a first word too wide alone is cut."""
    if text_width(words[0]) > width:
        return _cut(words[0], width), words[1:] if len(words) > 1 else []
    line, used = words[0], 1
    while used < len(words) and text_width(f"{line} {words[used]}") <= width:
        line = f"{line} {words[used]}"
        used += 1
    return line, words[used:]


def _with_ellipsis(line: str, width: float) -> str:
    """`line` with an ellipsis after it, dropping its last words (or characters) until both fit."""
    if line.endswith(ELLIPSIS):
        return line
    while " " in line and text_width(line + ELLIPSIS) > width:
        line = line.rsplit(" ", 1)[0]
    return line + ELLIPSIS if text_width(line + ELLIPSIS) <= width else _cut(line, width)


def _cut(word: str, width: float) -> str:
    """As much of `word` as fits before an ellipsis."""
    room = width - text_width(ELLIPSIS)
    kept = ""
    for ch in word:
        if text_width(kept + ch) > room:
            break
        kept += ch
    return kept + ELLIPSIS
