"""The verifier's fast formatters give exactly the entries of the general, row-by-row
functions, for well-typed rows with awkward strings and floats and for tampered rows alike."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from colibri.domains.log.batch import action_entries, record_entries
from colibri.domains.log.entries import stored_action_entry
from colibri.domains.trail.api import stored_record_hash

# SQLite hands back valid text (no lone surrogates), integers, floats (no NaN), bytes or NULL.
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30) | st.sampled_from(
    ['"', "\\", "\x00", "\x1f", "\x7f", "\u2028", "é", "😀", "a\nb\tc", ""]
)
floats = st.floats(allow_nan=False) | st.sampled_from(
    [0.0, -0.0, 1.0, 1e21, 1e-7, 5e-324, math.inf, -math.inf]
)
tampered = st.integers() | floats | st.binary(max_size=8) | st.none()


def _action_rows() -> st.SearchStrategy[tuple[object, ...]]:
    typed = st.tuples(
        st.integers(1, 2**53),
        text,
        text,
        text,
        text,
        st.sampled_from(["ok", "error", "denied", "interrupted"]) | text,
        st.none() | text,
        text,
        floats,
    )
    return typed | st.tuples(*(text | tampered for _ in range(9)))


def _record_rows() -> st.SearchStrategy[tuple[object, ...]]:
    typed = st.tuples(st.integers(1, 2**53), text, text, text, st.none() | text, st.none() | text, text, text)
    return typed | st.tuples(st.integers(1, 2**53), *(text | tampered for _ in range(7)))


@given(st.lists(_action_rows(), max_size=6))
def test_action_entries_are_the_stored_action_entries(rows: list[tuple[object, ...]]) -> None:
    assert action_entries(rows) == [stored_action_entry(*row) for row in rows]


@given(st.lists(_record_rows(), max_size=6))
def test_record_entries_are_the_stored_record_hashes(rows: list[tuple[object, ...]]) -> None:
    assert record_entries(rows) == [bytes.fromhex(stored_record_hash(*row)) for row in rows]  # type: ignore[arg-type]
