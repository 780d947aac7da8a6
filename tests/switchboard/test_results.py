"""The lean lane's checks of a raw result (results.py): what the SDK's client refuses is refused alike."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colibri.switchboard.base import MalformedResult
from colibri.switchboard.downstream.results import (
    SERVER_INFO_META,
    OutputSchemas,
    is_error,
    parsed,
    plain,
    without_server_info,
)

NUMBER = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEXT = {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}


def result(structured: Any = None, *, is_error: bool = False) -> dict[str, Any]:
    raw: dict[str, Any] = {"content": [{"type": "text", "text": "x"}], "isError": is_error}
    if structured is not None:
        raw["structuredContent"] = structured
    return raw


def test_structured_content_is_checked_against_the_tools_output_schema() -> None:
    schemas = OutputSchemas()
    schemas.check("count", NUMBER, result({"n": 1}))
    broken = r"^Invalid structured content returned by tool count: 'x' is not"
    with pytest.raises(MalformedResult, match=broken):
        schemas.check("count", NUMBER, result({"n": "x"}))
    with pytest.raises(MalformedResult, match="has an output schema but did not return structured content"):
        schemas.check("count", NUMBER, result())


def test_a_changed_schema_is_the_one_checked() -> None:
    # A new tools/list may change a tool's schema; the validator compiled for the old one must go.
    schemas = OutputSchemas()
    schemas.check("count", NUMBER, result({"n": 1}))
    schemas.check("count", dict(TEXT), result({"n": "one"}))
    with pytest.raises(MalformedResult):
        schemas.check("count", dict(TEXT), result({"n": 1}))


def test_no_schema_and_tool_errors_are_not_checked() -> None:
    schemas = OutputSchemas()
    schemas.check("free", None, result({"anything": True}))
    schemas.check("count", NUMBER, result({"n": "x"}, is_error=True))


def test_an_invalid_schema_or_result_is_a_malformed_result() -> None:
    with pytest.raises(MalformedResult, match="Invalid schema for tool bad"):
        OutputSchemas().check("bad", {"type": 12}, result({"n": 1}))
    with pytest.raises(MalformedResult, match="the answer is not a valid result"):
        parsed({"content": "not a list"})


def test_only_the_answering_servers_identity_is_taken_out_of_meta() -> None:
    raw = {"content": [], "_meta": {SERVER_INFO_META: {"name": "down"}, "keep": 1}}
    assert without_server_info(raw) == {"content": [], "_meta": {"keep": 1}}
    assert without_server_info({"content": [], "_meta": {SERVER_INFO_META: {}}}) == {"content": []}
    untouched = {"content": [], "_meta": {"keep": 1}}
    assert without_server_info(untouched) is untouched


# Results near the plain shape: every key and value that shape allows, and the ones it does not.
_values = st.none() | st.booleans() | st.integers() | st.text(max_size=3) | st.just([]) | st.just({})
_kinds, _texts = st.sampled_from(["text", "image", 1]), st.text(max_size=5) | st.integers()
_items = st.fixed_dictionaries({"type": _kinds, "text": _texts}) | st.fixed_dictionaries(
    {"type": _kinds, "text": _texts},
    optional={"data": st.text(max_size=3), "annotations": st.just({}) | st.just(1), "_meta": _values},
)
_near_plain = st.fixed_dictionaries(
    {"content": st.lists(_items, max_size=3)},
    optional={
        "isError": st.booleans() | st.sampled_from(["true", 1, None]),
        "structuredContent": _values,
        "_meta": st.none() | st.just({}) | st.just([]),
    },
)
_anything = st.fixed_dictionaries(
    {},
    optional={
        "content": st.lists(_items, max_size=3) | _values,
        "isError": _values,
        "structuredContent": _values,
        "_meta": _values,
        "resultType": _values,
        "other": _values,
    },
)
_results = _near_plain | _anything


@settings(max_examples=400)
@given(_results)
def test_the_plain_shape_is_one_the_sdk_model_takes_as_it_is(raw: dict[str, Any]) -> None:
    # The short way must never accept what the model refuses, nor read `isError` otherwise.
    if plain(raw):
        assert is_error(raw) == parsed(raw).is_error
        return
    try:
        model = parsed(raw)
    except MalformedResult:
        with pytest.raises(MalformedResult, match="the answer is not a valid result"):
            is_error(raw)
    else:
        assert is_error(raw) == model.is_error


def test_common_results_take_the_short_way() -> None:
    assert plain(
        {"content": [{"type": "text", "text": "hi"}], "structuredContent": {"n": 1}, "isError": False}
    )
    assert plain({"content": [], "_meta": {"k": 1}})
    assert not plain({"content": [{"type": "text", "text": "hi", "annotations": {}}]})
    assert not plain({"content": [{"type": "text", "text": 1}]})
    assert not plain({"content": [], "isError": "true"})  # the model reads it, leniently
    assert is_error({"content": [], "isError": "true"}) is True
