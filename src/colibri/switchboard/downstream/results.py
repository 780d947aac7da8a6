"""A downstream's raw tools/call result, checked as the SDK's client checks one (for the lean lane).

The lean lane passes results on as JSON without building the SDK's models for the client, but what
the SDK's client would refuse is refused alike, with its messages: a result that is not a
`CallToolResult`, and structured content that breaks the tool's output schema. The identity of the
answering server, which the 2026 era stamps into `_meta`, is taken out: the switchboard answers as
itself.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from jsonschema import SchemaError
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from pydantic import ValidationError
from referencing import Registry
from referencing.exceptions import Unresolvable

from colibri.switchboard.base import MalformedResult, first_line

SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


_PLAIN_KEYS = frozenset({"content", "structuredContent", "isError", "_meta"})
_TEXT_KEYS = frozenset({"type", "text"})


def is_error(raw: dict[str, Any]) -> bool:
    """Whether the raw result reports a tool error; `MalformedResult` when it is not a valid result."""
    if plain(raw):
        return bool(raw.get("isError", False))
    return parsed(raw).is_error


def plain(raw: dict[str, Any]) -> bool:
    """Whether `raw` has the shape nearly every result has, which the SDK's model takes as it is:
    text content only, `isError` a boolean, `_meta` an object, nothing else.

    Building the model costs more than the rest of the switchboard's work on an answer; a result of
    any other shape is judged by the model itself.
    """
    if not raw.keys() <= _PLAIN_KEYS or type(raw.get("isError", False)) is not bool:
        return False
    content, meta = raw.get("content"), raw.get("_meta")
    if type(content) is not list or not (meta is None or type(meta) is dict):
        return False
    for item in content:
        if type(item) is not dict or item.keys() != _TEXT_KEYS or item["type"] != "text":
            return False
        if type(item["text"]) is not str:
            return False
    return True


def parsed(raw: dict[str, Any]) -> types.CallToolResult:
    """The result as the SDK's model; `MalformedResult` when it is not one."""
    try:
        return types.CallToolResult.model_validate(raw, by_name=False)
    except ValidationError as exc:
        raise MalformedResult(f"the answer is not a valid result: {first_line(str(exc))}") from exc


def without_server_info(raw: dict[str, Any]) -> dict[str, Any]:
    meta = raw.get("_meta")
    if not isinstance(meta, dict) or SERVER_INFO_META not in meta:
        return raw
    rest = {key: value for key, value in meta.items() if key != SERVER_INFO_META}
    return {key: value for key, value in raw.items() if key != "_meta"} | ({"_meta": rest} if rest else {})


class OutputSchemas:
    """Checks structured content against the tools' output schemas, each compiled once."""

    def __init__(self) -> None:
        # Compiling costs far more than validating; a tool's entry is rebuilt when its schema changes.
        self._compiled: dict[str, tuple[dict[str, Any], Validator]] = {}

    def check(self, tool: str, schema: dict[str, Any] | None, raw: dict[str, Any]) -> None:
        """`raw` is a valid result whose structured content fits the schema; else `MalformedResult`."""
        if is_error(raw) or schema is None:
            return
        if "structuredContent" not in raw:
            raise MalformedResult(f"Tool {tool} has an output schema but did not return structured content")
        try:
            error = best_match(self._validator(tool, schema).iter_errors(raw["structuredContent"]))
        except Unresolvable as exc:
            raise MalformedResult(f"Invalid schema for tool {tool}: {exc}") from None
        if error is not None:
            raise MalformedResult(f"Invalid structured content returned by tool {tool}: {error.message}")

    def _validator(self, tool: str, schema: dict[str, Any]) -> Validator:
        compiled = self._compiled.get(tool)
        if compiled is not None and compiled[0] is schema:
            return compiled[1]
        kind = validator_for(schema)
        try:
            kind.check_schema(schema)
        except SchemaError as exc:
            raise MalformedResult(f"Invalid schema for tool {tool}: {first_line(str(exc))}") from None
        # No registry beyond the schema itself: a `$ref` resolves within the document, as in the SDK.
        validator = kind(schema, registry=Registry())
        self._compiled[tool] = (schema, validator)
        return validator
