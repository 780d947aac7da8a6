"""The lean lanes' JSON (jsonlines.py) reads and writes what the stdlib does, lone surrogates included."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri.switchboard.base.jsonlines import dumps, loads

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()  # beyond 64 bits too
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()  # lone surrogates included
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=5), _values, max_size=5))
def test_a_message_reads_back_as_the_stdlib_reads_it(message: dict[str, Any]) -> None:
    line = dumps(message)
    assert b"\n" not in line  # one message, one line
    assert loads(line) == json.loads(line) == message


@given(_values)
def test_what_the_stdlib_writes_reads_the_same(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, separators=(",", ":"))):
        data = text.encode("utf-8", "surrogatepass")
        try:
            expected = json.loads(data)
        except UnicodeDecodeError:  # surrogates written raw are not UTF-8: neither side takes them
            with pytest.raises(UnicodeDecodeError):
                loads(data)
            continue
        assert loads(data) == expected


def test_a_lone_surrogate_goes_through_as_an_ascii_escape() -> None:
    message = {"text": "a\ud800b"}
    line = dumps(message)
    assert line == b'{"text":"a\\ud800b"}'
    assert loads(line) == message


def test_nan_and_infinity_are_written_as_the_stdlib_writes_them() -> None:
    line = dumps({"x": math.nan, "y": math.inf})
    assert line == b'{"x":NaN,"y":Infinity}'
    read = loads(line)
    assert math.isnan(read["x"]) and read["y"] == math.inf


@pytest.mark.parametrize("line", [b"", b"{", b'{"a":}', b"\xff", b"[" * 100_000])
def test_what_is_not_json_raises_value_or_recursion_error(line: bytes) -> None:
    with pytest.raises((ValueError, RecursionError)):
        loads(line)
