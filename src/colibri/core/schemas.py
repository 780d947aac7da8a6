"""JSON Schemas as tools/list advertises them: self-contained, with `$ref`s inlined.

Pydantic emits nested models as `$defs` plus `$ref`; clients that check every result
against the output schema (the MCP SDK does) pay for resolving each `$ref` on every
call, and some clients resolve them poorly. Inlined schemas are plain and cheap.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})
    inlined = _inline(schema, definitions, ())
    assert isinstance(inlined, dict)
    return inlined


def _inline(node: Any, definitions: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in seen:
            raise ValueError(f"recursive model {name!r} cannot be inlined into a tool schema")
        target = _inline(definitions[name], definitions, (*seen, name))
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return {**target, **_inline(siblings, definitions, seen)}
    return {key: _inline(value, definitions, seen) for key, value in node.items()}
