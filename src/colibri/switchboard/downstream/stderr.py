"""A downstream's stderr, passed on to ours with its config's secrets masked (SPEC §21).

The values `${VAR}` put into a server's entry (and its `envFile`'s) are its `ServerSpec.hidden`;
the switchboard's own messages about the server mask them with `base.hide`. A server that echoes
its environment (a token in a debug line, a URL with a password) writes to stderr, which it would
otherwise share with us: so a server with secrets writes into a pipe of ours instead, and a thread
copies it to our stderr line by line through the same `hide`. A line longer than `LINE_CAP` is
passed on in pieces, each holding back the tail a secret could still be cut across.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable
from typing import IO

from colibri.switchboard.base import hide

LINE_CAP = 65536
OUR_STDERR = 2


class MaskedStderr:
    """One process's stderr: `open` before it starts (the pipe's end it writes to), `spawned` after."""

    def __init__(self, name: str, secrets: Iterable[str]) -> None:
        self._name = name
        self._secrets = frozenset(secrets)
        self._writer: IO[str] | None = None

    def open(self) -> IO[str]:
        """The pipe's end for the process to write to; its copier already reads the other end."""
        read_fd, write_fd = os.pipe()
        self._writer = os.fdopen(write_fd, "w")
        copier = threading.Thread(
            target=self._copy, args=(read_fd,), name=f"stderr of {self._name}", daemon=True
        )
        copier.start()
        return self._writer

    def spawned(self) -> None:
        """Close our copy of the writing end: the copier ends when the process (and any child of
        it that kept its stderr) has closed its own."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()

    def _copy(self, read_fd: int) -> None:
        keep = max((len(secret.encode()) for secret in self._secrets), default=1) - 1
        with os.fdopen(read_fd, "rb") as source:
            carry = b""
            while line := source.readline(LINE_CAP):
                text = carry + line
                if text.endswith(b"\n") or keep == 0 or len(text) <= keep:
                    out, carry = text, b""
                else:  # a piece of a long line: a secret may start in its last `keep` bytes
                    out, carry = text[:-keep], text[-keep:]
                _write(self._masked(out))
            if carry:
                _write(self._masked(carry))

    def _masked(self, data: bytes) -> bytes:
        text = data.decode("utf-8", "surrogateescape")  # any bytes through unchanged but the secrets
        return hide(text, self._secrets).encode("utf-8", "surrogateescape")


def _write(data: bytes) -> None:
    with contextlib.suppress(OSError):  # our stderr closed: the lines have nowhere to go
        while data:
            data = data[os.write(OUR_STDERR, data) :]
