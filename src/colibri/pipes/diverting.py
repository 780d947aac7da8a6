"""A pipe's reader that offers each complete line to a `Divert` the moment it arrives.

Judged in the reader, a line waits for the reading task to wake before anything can happen to it:
one turn of the event loop per line, on every pipe a routed call crosses (four per call through
the switchboard). Judged here, inside the pipe's `data_received`, a taken line starts its work in
the same turn that read it, and the reading task never wakes for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, SupportsIndex

if TYPE_CHECKING:
    from colibri.pipes.writer import LineWriter

# An unfinished line longer than this (or than the message limit) is not held back to be judged:
# it goes on to the reader as it arrives, and the SDK handles it. Diverted calls are small.
HOLD_LIMIT = 1024 * 1024


class Divert(Protocol):
    """Takes some raw lines off a pipe before the SDK sees them."""

    def attach(self, writer: LineWriter) -> None:
        """Where this divert's answers go (the same pipe the SDK writes to)."""

    def take(self, line: bytes) -> bool:
        """Whether `line` (one whole line, newline included) was taken: then the SDK never sees it."""

    async def drained(self) -> None:
        """Return once every request taken has been answered (called at the end of input)."""


class DivertingReader(asyncio.StreamReader):
    """An `asyncio.StreamReader` whose complete lines `divert` may take before they are buffered.

    Lines keep their order: what is not taken is buffered as it came, and the divert sees the lines
    in the order they were written. A line over `limit` is never offered: the reader refuses it.
    Only lines that arrive after `divert` is set are offered, so set it before the pipe is open.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(limit=limit)
        self.divert: Divert | None = None
        self._line_limit = limit  # as `readuntil` counts it: the line without its newline
        self._hold_limit = min(HOLD_LIMIT, limit)
        self._held = bytearray()  # the start of a line not yet complete, to be judged when it is
        self._passing = False  # the buffer already holds the start of the current line

    def feed_data(self, chunk: Iterable[SupportsIndex]) -> None:
        data = bytes(chunk)  # the very object when it is bytes already, as a pipe's reads are
        if self.divert is None and not self._held:
            self._passing = not data.endswith(b"\n") if data else self._passing
            super().feed_data(data)
            return
        if (
            not self._held
            and not self._passing
            and data.endswith(b"\n")
            and data.find(b"\n") == len(data) - 1
        ):
            # The usual read: exactly one whole line (a request, an answer), judged without a copy.
            if len(data) - 1 > self._line_limit or self.divert is None or not self.divert.take(data):
                super().feed_data(data)
            return
        self._held += data
        start = 0
        if self._passing:
            newline = self._held.find(b"\n")
            if newline < 0:
                self._pass_held(passing=True)
                return
            start = newline + 1
        kept = [bytes(self._held[:start])] if start else []
        while (newline := self._held.find(b"\n", start)) >= 0:
            line = bytes(self._held[start : newline + 1])
            if newline - start > self._line_limit or self.divert is None or not self.divert.take(line):
                kept.append(line)
            start = newline + 1
        del self._held[:start]
        if kept:
            super().feed_data(b"".join(kept))
        self._passing = False
        if len(self._held) > self._hold_limit:
            self._pass_held(passing=True)

    def feed_eof(self) -> None:
        # The held start of a line is never over the limits (it would have been passed on).
        if self._held and (self.divert is None or not self.divert.take(bytes(self._held))):
            self._pass_held(passing=False)
        self._held.clear()
        super().feed_eof()

    def _pass_held(self, passing: bool) -> None:
        super().feed_data(bytes(self._held))
        self._held.clear()
        self._passing = passing
