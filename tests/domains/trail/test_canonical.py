"""The canonical record bytes are RFC 8785 (JCS), proven against the `rfc8785` implementation."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from colibri.domains.trail.canonical import (
    GENESIS_HASH,
    RECORD_ID_PATTERN,
    record_hash,
    record_id_for,
    record_json,
    stored_record_hash,
)

# Characters JSON escaping is about, plus non-ASCII across the planes (emoji are outside the
# BMP, i.e. surrogate pairs in UTF-16, which is where JCS and naive encoders disagree).
TRICKY = st.sampled_from(
    [
        '"',
        "\\",
        "/",
        "\n",
        "\r",
        "\t",
        "\b",
        "\f",
        "\x00",
        "\x1f",
        "\x7f",
        "\u2028",
        "é",
        "€",
        "😀",
        "𝄞",
        "\ufeff",
    ]
)
TEXT = st.text(st.one_of(st.characters(codec="utf-8"), TRICKY), max_size=40)
OPTIONAL = st.none() | TEXT

RECORDS = st.fixed_dictionaries(
    {
        "seq": st.integers(min_value=1, max_value=2**53 - 1),
        "session_id": TEXT,
        "kind": TEXT,
        "content": TEXT,
        "task_id": OPTIONAL,
        "agent_id": OPTIONAL,
        "created_at": TEXT,
        "prev_hash": TEXT,
    }
)


def _positional(record: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(
        record[key]
        for key in ("seq", "session_id", "kind", "content", "task_id", "agent_id", "created_at", "prev_hash")
    )


@settings(max_examples=400, deadline=None)
@given(RECORDS)
def test_record_json_is_rfc8785(record: dict[str, Any]) -> None:
    canonical = record_json(*_positional(record)).encode()
    assert canonical == rfc8785.dumps(record)


@settings(max_examples=200, deadline=None)
@given(RECORDS)
def test_it_is_also_the_sorted_compact_dump_the_spec_names(record: dict[str, Any]) -> None:
    dumped = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert record_json(*_positional(record)) == dumped


@settings(max_examples=100, deadline=None)
@given(RECORDS)
def test_the_hash_is_sha256_of_the_canonical_bytes_and_the_tolerant_path_agrees(
    record: dict[str, Any],
) -> None:
    expected = hashlib.sha256(rfc8785.dumps(record)).hexdigest()
    assert record_hash(**record) == expected
    assert stored_record_hash(*_positional(record)) == expected


def test_a_known_record_hashes_to_a_known_value() -> None:
    record: dict[str, Any] = {
        "seq": 1,
        "session_id": "s-1",
        "kind": "plan",
        "content": 'Use "JCS" \\ é 😀\n',
        "task_id": None,
        "agent_id": "a",
        "created_at": "2025-01-01T00:00:00.000000Z",
        "prev_hash": GENESIS_HASH,
    }
    text = record_json(*_positional(record))
    assert text == (
        '{"agent_id":"a","content":"Use \\"JCS\\" \\\\ é 😀\\n","created_at":"2025-01-01T00:00:00.000000Z",'
        f'"kind":"plan","prev_hash":"{GENESIS_HASH}","seq":1,"session_id":"s-1","task_id":null}}'
    )
    assert record_hash(**record) == hashlib.sha256(text.encode()).hexdigest()


def test_stored_values_that_are_not_text_hash_through_their_raw_bytes() -> None:
    fields = (7, "s", "plan", "text", None, None, "t", GENESIS_HASH)
    clean = stored_record_hash(*fields)
    assert stored_record_hash(7, b"s", b"plan", b"text", None, None, b"t", GENESIS_HASH.encode()) == clean
    invalid_utf8 = b"te\xffxt".decode("utf-8", "surrogateescape")
    assert stored_record_hash(7, "s", "plan", invalid_utf8, None, None, "t", GENESIS_HASH) != clean
    assert stored_record_hash(7, "s", "plan", 5, None, None, "t", GENESIS_HASH) != clean


def test_record_ids_are_derived_from_the_hash() -> None:
    digest = "ab" * 32
    assert record_id_for(digest) == "rec_" + "ab" * 12
    assert re.fullmatch(RECORD_ID_PATTERN, record_id_for(digest))
