"""Is a remembered scan still true? Stat signatures, checked the way git checks its index.

A directory's mtime changes when an entry is added, removed or renamed in it; a file's
signature (device, inode, mode, size, mtime, ctime) changes when it is written or replaced.
Timestamps are coarse (a few ms on Linux, 2 s on FAT), so a change made in the same tick as the
scan can leave the signature unchanged. A signature whose timestamps are that close to the moment
it was observed is *racy*: it is trusted only after the content (a file's bytes, a directory's
names) is compared again. Once the timestamps are old enough, a stat is all a check costs.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass

# Wider than any timestamp granularity we expect (FAT's 2 s) so a same-tick change is never trusted.
RACY_WINDOW_NS = 2_100_000_000

Signature = tuple[int, int, int, int, int, int]


def signature(path: str) -> Signature | None:
    """The signature of what `path` leads to (symlinks followed), or None when nothing is there."""
    try:
        st = os.stat(path)
    except OSError:  # missing, a broken link, a loop or no permission: all read as "nothing usable here"
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_regular(path: str, limit: int = -1) -> bytes | None:
    """Up to `limit` bytes of `path` if it is a regular file, else None. Opened without blocking
    and checked on the open descriptor: a FIFO swapped in after a stat would block a plain open."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read(limit)


def is_racy(sig: Signature, observed_at_ns: int) -> bool:
    """True when a change within the same timestamp tick as the observation could hide behind `sig`."""
    return max(sig[4], sig[5]) >= observed_at_ns - RACY_WINDOW_NS


def digest(content: bytes) -> bytes:
    return hashlib.blake2b(content, digest_size=16).digest()


def listing(path: str) -> frozenset[str] | None:
    try:
        return frozenset(os.listdir(path))
    except OSError:
        return None


@dataclass(slots=True)
class DirWatch:
    """A directory the scan listed (or a path it only needs to see unchanged, when `names` is None)."""

    path: str
    sig: Signature | None
    names: frozenset[str] | None
    observed_at: int

    def fresh(self, now: int) -> bool:
        current = signature(self.path)
        if current != self.sig:
            return False
        if current is None or self.names is None or not is_racy(current, self.observed_at):
            return True
        if listing(self.path) != self.names:
            return False
        self.observed_at = now
        return True


@dataclass(slots=True)
class FileWatch:
    """A SKILL.md the scan looked at; `content_digest` is None when its bytes were not read."""

    path: str
    sig: Signature | None
    content_digest: bytes | None
    observed_at: int

    def fresh(self, now: int) -> bool:
        current = signature(self.path)
        if current != self.sig:
            return False
        if current is None or self.content_digest is None or not is_racy(current, self.observed_at):
            return True
        try:
            content = read_regular(self.path)
        except OSError:
            return False
        if content is None or digest(content) != self.content_digest:
            return False
        self.observed_at = now
        return True

    def trusted(self, sig: Signature | None) -> bool:
        """True when `sig` (just observed) proves the file unchanged since this watch, without reading it."""
        return (
            sig is not None
            and sig == self.sig
            and self.content_digest is not None
            and not is_racy(sig, self.observed_at)
        )
