"""Results of the switchboard's own making: the Colibri envelopes of SPEC §1.6.

Each carries the envelope as one JSON text block, and as `structuredContent` unless the tool it
answers for advertises an output schema the envelope does not satisfy: clients built on the
TypeScript SDK check `structuredContent` against that schema even when `isError` is true, and would
replace our message with a schema complaint. Downstream results never pass through here: they go
back to the client unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import mcp_types as types
from jsonschema import SchemaError
from jsonschema.validators import validator_for
from referencing.exceptions import Unresolvable

from colibri.core.envelope_text import to_json

Schema = dict[str, Any]


def success(data: dict[str, Any]) -> types.CallToolResult:
    return _result({"ok": True, "data": data}, structured=True)


def error(
    code: str, message: str, *, schemas: Iterable[Schema | None] = (), **details: Any
) -> types.CallToolResult:
    """A Pattern A error: `isError` true, `{"ok": false, "error": {code, message, details}}`.

    `schemas` are the output schemas the client may hold for the tool called (a fallback capability
    has one per entry); the envelope travels as `structuredContent` only if it satisfies them all.
    """
    envelope = {"ok": False, "error": {"code": code, "message": message, "details": details}}
    return _result(envelope, structured=all(conforms(envelope, schema) for schema in schemas))


def conforms(instance: Any, schema: Schema | None) -> bool:
    """Whether `instance` satisfies `schema` (no schema: anything does; a broken schema: nothing)."""
    if schema is None:
        return True
    try:
        validator_class = validator_for(schema)
        validator_class.check_schema(schema)
        return bool(validator_class(schema).is_valid(instance))
    except (SchemaError, Unresolvable):
        return False


def _result(envelope: dict[str, Any], *, structured: bool) -> types.CallToolResult:
    result = types.CallToolResult(
        content=[types.TextContent(text=to_json(envelope))], is_error=envelope["ok"] is not True
    )
    if structured:
        # Set only when wanted: an explicit None would go out as `"structuredContent": null`.
        result.structured_content = envelope
    return result
