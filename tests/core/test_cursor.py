"""Cursors: what this server issues round-trips; anything else, out-of-range seqs included, is refused."""

from __future__ import annotations

import base64

import pytest

from colibri.core.cursor import MAX_SEQ, decode_cursor, encode_cursor

REFUSAL = "cursor is not one this server issued"


def test_issued_cursors_round_trip_up_to_the_largest_seq() -> None:
    for seq in (0, 1, 49, 10**12, MAX_SEQ):
        assert decode_cursor(encode_cursor(seq)) == seq


@pytest.mark.parametrize("seq", [MAX_SEQ + 1, 2**64, 10**30])
def test_a_forged_cursor_beyond_sqlite_integers_is_refused(seq: int) -> None:
    with pytest.raises(ValueError, match=REFUSAL):
        decode_cursor(encode_cursor(seq))


def test_a_cursor_with_thousands_of_digits_is_refused_with_the_same_message() -> None:
    cursor = base64.urlsafe_b64encode(b"after:" + b"9" * 5000).decode().rstrip("=")
    with pytest.raises(ValueError, match=REFUSAL):
        decode_cursor(cursor)
