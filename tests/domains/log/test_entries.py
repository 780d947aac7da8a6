"""Entry hashes: an action's JCS text is RFC 8785 (held to the rfc8785 package), numbers print
as ECMAScript prints them, and a stored row yields the entry it was logged with."""

from __future__ import annotations

import hashlib

import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from colibri.core.jcs import es_number
from colibri.domains.log.entries import action_entry, action_json, stored_action_entry

text = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)


@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53) + 1, 2**53 - 1))
def test_numbers_print_as_rfc8785_prints_them(value: float) -> None:
    assert es_number(value) == rfc8785.dumps(value).decode()


@given(
    st.integers(1, 2**53 - 1),
    text,
    text,
    text,
    text,
    st.sampled_from(["ok", "error", "denied", "interrupted"]),
    st.none() | st.text("0123456789abcdef", min_size=64, max_size=64),
    text,
    st.none() | st.floats(min_value=0, max_value=1e9),
)
def test_action_json_is_jcs(  # noqa: PLR0917 - one argument per field
    sequence_no: int,
    correlation_id: str,
    tool: str,
    principal: str,
    arguments: str,
    outcome: str,
    result: str | None,
    started_at: str,
    duration: float | None,
) -> None:
    arguments_sha256 = hashlib.sha256(arguments.encode()).hexdigest()
    obj = {
        "type": "action",
        "sequence_no": sequence_no,
        "correlation_id": correlation_id,
        "tool": tool,
        "principal": principal,
        "arguments_sha256": arguments_sha256,
        "outcome": outcome,
        "result_sha256": result,
        "started_at": started_at,
        "duration_ms": duration,
    }
    fields = (
        sequence_no,
        correlation_id,
        tool,
        principal,
        arguments_sha256,
        outcome,
        result,
        started_at,
        duration,
    )
    expected = rfc8785.dumps(obj)
    assert action_json(*fields).encode() == expected
    entry = action_entry(
        sequence_no, correlation_id, tool, principal, arguments, outcome, result, started_at, duration
    )
    assert entry == hashlib.sha256(expected).digest()
    assert (
        stored_action_entry(
            sequence_no, correlation_id, tool, principal, arguments, outcome, result, started_at, duration
        )
        == entry
    )


def test_a_tampered_value_of_the_wrong_type_cannot_reproduce_the_entry() -> None:
    row = (7, "c", "thought_record", "local", "{}", "ok", "ab" * 32, "2026-01-01T00:00:00.000000Z", 1.5)
    entry = action_entry(*row)
    assert stored_action_entry(*row) == entry
    for position, value in ((0, "7"), (8, "1.5"), (8, b"\xff"), (4, b"{}\xff"), (1, b"c")):
        changed = list(row)
        changed[position] = value
        if value == b"c":  # bytes holding the same UTF-8 text: still the same entry
            assert stored_action_entry(*changed) == entry
        else:
            assert stored_action_entry(*changed) != entry
