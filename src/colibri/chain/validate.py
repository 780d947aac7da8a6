"""Stage 2 — schema-validate: the tool's input model is the only judge of its arguments."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from colibri.chain.errors import InvalidParams
from colibri.chain.types import Call, ChainDeps, Envelope, Next


class SchemaValidate:
    def __init__(self, deps: ChainDeps) -> None:
        pass

    async def __call__(self, call: Call, call_next: Next) -> Envelope:
        assert call.tool is not None
        raw = {} if call.raw_arguments is None else call.raw_arguments
        if not isinstance(raw, dict):
            raise InvalidParams(
                f"arguments for {call.tool.name} must be a JSON object, got {_json_type(raw)}",
                issues=[{"path": "", "message": "expected an object", "type": "object_type"}],
            )
        try:
            call.arguments = call.tool.arguments_model.model_validate(raw)
        except ValidationError as exc:
            issues = [_issue(error) for error in exc.errors(include_url=False)]
            summary = "; ".join(f"{i['path'] or '(arguments)'}: {i['message']}" for i in issues)
            raise InvalidParams(f"invalid arguments for {call.tool.name}: {summary}", issues=issues) from None
        return await call_next(call)


def _issue(error: Any) -> dict[str, str]:
    return {
        "path": ".".join(str(part) for part in error["loc"]),
        "message": error["msg"],
        "type": error["type"],
    }


def _json_type(value: object) -> str:
    names = {str: "a string", list: "an array", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)
