"""Files that hold secrets must be writable by their owner alone (SPEC §14).

Whoever can write a tokens file can add a token of their own; a mode such as 0666 or 0664 is
refused at start-up (exit 2) rather than trusted.
"""

from __future__ import annotations

import stat
from pathlib import Path

from colibri.serving.errors import UnsafeFile


def refuse_if_others_may_write(path: Path, what: str = "the tokens file") -> None:
    """`UnsafeFile` naming `path`, who may write it and the fix; a missing file passes (whoever
    creates it makes it 0600)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    if mode & stat.S_IWOTH:
        writers = "every user"
    elif mode & stat.S_IWGRP:
        writers = "its group"
    else:
        return
    raise UnsafeFile(
        f"{what} {path} is writable by {writers} (mode {stat.S_IMODE(mode):04o}), so anyone among "
        f"them could add a token; make it the owner's alone: chmod 600 {path}"
    )
