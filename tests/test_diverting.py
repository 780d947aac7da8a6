"""`DivertingReader`: lines are offered whole, in order, once; nothing is lost or reordered."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri.pipes import DivertingReader, LineReader, LineWriter

ASYNC = pytest.mark.anyio


class Taker:
    """Takes the lines that contain b"take"; remembers every line it was offered."""

    def __init__(self) -> None:
        self.offered: list[bytes] = []

    def attach(self, writer: LineWriter) -> None:
        return None

    def take(self, line: bytes) -> bool:
        self.offered.append(line)
        return b"take" in line

    async def drained(self) -> None:
        return None


def fed(chunks: list[bytes], limit: int = 1 << 16) -> tuple[list[bytes], bytes]:
    """(the lines offered, what the reader reads) once `chunks` and the end of input arrive."""

    async def feed() -> tuple[list[bytes], bytes]:
        taker = Taker()
        reader = DivertingReader(limit)
        reader.divert = taker
        for chunk in chunks:
            reader.feed_data(chunk)
        reader.feed_eof()
        return taker.offered, await reader.read()

    return asyncio.run(feed())


bodies = st.binary(max_size=30).map(lambda body: body.replace(b"\n", b""))
lines = st.lists(st.tuples(st.sampled_from([b"take", b"keep", b""]), bodies), max_size=12)


@given(lines, st.lists(st.integers(min_value=1, max_value=40), max_size=20), st.booleans())
def test_every_line_is_offered_once_in_order_and_what_is_not_taken_is_left_as_it_came(
    parts: list[tuple[bytes, bytes]], cuts: list[int], last_has_newline: bool
) -> None:
    wanted = [kind + body + b"\n" for kind, body in parts]
    if wanted and not last_has_newline:
        wanted[-1] = wanted[-1][:-1]
    data = b"".join(wanted)
    chunks, at = [], 0
    for cut in cuts:
        chunks.append(data[at : at + cut])
        at += cut
    chunks.append(data[at:])
    offered, left = fed(chunks)
    assert offered == [line for line in wanted if line]
    assert left == b"".join(line for line in offered if b"take" not in line)


def test_a_line_over_the_limit_is_never_offered_and_reaches_the_reader() -> None:
    long = b"take" + b"x" * 20 + b"\n"
    assert fed([long[:10], long[10:], b"take short\n"], limit=16) == ([b"take short\n"], long)


@ASYNC
async def test_an_unfinished_line_longer_than_the_limit_goes_on_at_once() -> None:
    taker = Taker()
    reader = DivertingReader(16)
    reader.divert = taker
    reader.feed_data(b"take" + b"y" * 30)
    with pytest.raises(asyncio.LimitOverrunError):
        await reader.readuntil(b"\n")  # not held back: the reader can refuse it already
    reader.feed_data(b"yy\ntake ok\n")
    reader.feed_eof()
    assert taker.offered == [b"take ok\n"]
    assert await reader.read() == b"take" + b"y" * 32 + b"\n"


@ASYNC
async def test_a_divert_set_mid_line_leaves_that_line_to_the_reader() -> None:
    reader = DivertingReader(1 << 16)
    reader.feed_data(b"take the start")
    taker = Taker()
    reader.divert = taker
    reader.feed_data(b" and the end\ntake next\n")
    reader.feed_eof()
    assert taker.offered == [b"take next\n"]
    assert await reader.read() == b"take the start and the end\n"


@ASYNC
async def test_without_a_divert_it_is_a_plain_stream_reader() -> None:
    reader = DivertingReader(1 << 16)
    reader.feed_data(b"take a\n")
    reader.feed_data(b"take b")
    reader.feed_eof()
    assert await reader.read() == b"take a\ntake b"


@ASYNC
async def test_a_line_reader_accepts_a_divert_only_over_a_diverting_reader() -> None:
    with pytest.raises(TypeError, match="DivertingReader"):
        LineReader(asyncio.StreamReader()).divert = Taker()
    diverting = DivertingReader(1 << 16)
    taker = Taker()
    LineReader(diverting).divert = taker
    assert diverting.divert is taker
