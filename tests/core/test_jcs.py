"""Canonical JSON of any value (core/jcs.py) is RFC 8785: held to the `rfc8785` package on random
JSON, key order by UTF-16 code units included; outside JCS's domain it still gives a digest."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from colibri.core.jcs import canonical, digest

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


@given(JSON)
def test_canonical_is_rfc8785(value: Any) -> None:
    assert canonical(value).encode() == rfc8785.dumps(value)


@given(JSON)
def test_the_digest_is_the_sha256_of_the_canonical_bytes(value: Any) -> None:
    assert digest(value) == hashlib.sha256(rfc8785.dumps(value)).hexdigest()


@pytest.mark.parametrize(
    "value",
    [
        {"v": 1.0, "w": [1e21, 1e-7, 0.1, -0.0]},
        {"big": 2**53 + 1, "n": 123456789012345678},
        {"text": "v1.2 e5 NaN Infinity 1234567890123456", "x": 3},
    ],
)
def test_floats_big_integers_and_look_alikes_in_strings(value: Any) -> None:
    """What the C encoder writes otherwise than JCS takes the long way; a string that merely looks
    like one is the same either way."""
    if any(isinstance(n, int) and abs(n) > 2**53 for n in value.values()):
        assert canonical(value) == '{"big":9007199254740992,"n":123456789012345680}'
    else:
        assert canonical(value).encode() == rfc8785.dumps(value)


def test_keys_beyond_the_basic_plane_sort_by_utf16_code_units() -> None:
    # U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FF5E, although its code point is higher.
    value = {"\uff5e": 1, "\U0001f600": 2, "a": 3}
    assert canonical(value).encode() == rfc8785.dumps(value)
    assert canonical(value).index("\U0001f600") < canonical(value).index("\uff5e")


def test_the_same_value_written_differently_has_one_digest() -> None:
    assert digest({"b": [1.0, 2], "a": "x"}) == digest({"a": "x", "b": [1, 2.0]})


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
        (2**60, "1152921504606847000"),  # as ECMAScript reads and prints it: a double
        (10**400, str(10**400)),
        ("\ud800", '"\ud800"'),
    ],
)
def test_values_outside_jcs_still_have_a_digest(value: Any, text: str) -> None:
    assert canonical(value) == text
    assert len(digest({"v": value})) == 64


@pytest.mark.parametrize("value", [{"a": {1, 2}}, b"bytes", [object()]])
def test_what_is_not_json_is_refused(value: Any) -> None:
    with pytest.raises(TypeError):
        canonical(value)
