"""C2SP tlog-checkpoint bodies: origin line, decimal tree size, base64 root hash, then
optional extension lines, each line ending in a newline. Signed as a note (note.py).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from colibri.core.merkle import HASH_SIZE
from colibri.domains.log.note import NoteRejected, Verifier, open_note, shown


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A log state: which log, how many entries, and their root."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def body(self) -> str:
        lines = [self.origin, str(self.size), base64.b64encode(self.root).decode(), *self.extensions]
        return "".join(f"{line}\n" for line in lines)


def valid_origin(origin: str) -> bool:
    """A non-empty line of printable text."""
    return bool(origin) and origin.isprintable()


MAX_SIZE_DIGITS = 20  # a size is a uint64


def parse_body(text: str) -> Checkpoint:
    """The checkpoint a note's text states; NoteRejected when it is not a tlog-checkpoint."""
    if not text.endswith("\n"):
        raise NoteRejected("a checkpoint's text ends with a newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3:
        raise NoteRejected("a checkpoint has an origin line, a size line and a root hash line")
    origin, size_text, root_text, *extensions = lines
    if not valid_origin(origin):
        raise NoteRejected("the checkpoint's origin line is empty or not printable")
    if not size_text.isascii() or not size_text.isdigit() or (size_text != "0" and size_text[0] == "0"):
        raise NoteRejected(f"the checkpoint's size {shown(size_text)} is not a decimal number")
    if len(size_text) > MAX_SIZE_DIGITS:  # never handed to int(), which fails past 4,300 digits
        raise NoteRejected(f"the checkpoint's size has {len(size_text)} digits; a uint64 has at most 20")
    try:
        root = base64.b64decode(root_text, validate=True)
    except (binascii.Error, ValueError):
        root = b""
    if len(root) != HASH_SIZE:
        raise NoteRejected("the checkpoint's root hash is not 32 bytes of base64")
    if any(not line for line in extensions):
        raise NoteRejected("the checkpoint has an empty extension line")
    return Checkpoint(origin, int(size_text), root, tuple(extensions))


def open_checkpoint(note: str, verifier: Verifier) -> Checkpoint:
    """Check the note's signature by `verifier` and read the checkpoint it signs."""
    return parse_body(open_note(note, verifier))
