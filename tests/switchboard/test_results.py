"""The lean lane's checks of a raw result (results.py): what the SDK's client refuses is refused alike."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

from colibri.switchboard.errors import MalformedResult
from colibri.switchboard.results import SERVER_INFO_META, OutputSchemas, parsed, without_server_info

NUMBER = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TEXT = {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}


def result(structured: Any = None, *, is_error: bool = False) -> types.CallToolResult:
    raw: dict[str, Any] = {"content": [{"type": "text", "text": "x"}], "isError": is_error}
    if structured is not None:
        raw["structuredContent"] = structured
    return parsed(raw)


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
