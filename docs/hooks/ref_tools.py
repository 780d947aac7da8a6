"""The tools reference: every tool of the catalogue (colibri.tools.catalog.TOOLS) with the input and
output schemas tools/list serves, read from colibri/tools/schemas.json."""

from __future__ import annotations

import json
from typing import Any

from colibri.core.modes import Mode
from colibri.tools import catalog, snapshot


class StaleSchemas(Exception):
    """schemas.json does not hold a tool the catalogue declares."""


def page() -> str:
    schemas = snapshot.kept()
    lines = [
        "# Tools",
        "",
        "<!-- generated from colibri.tools.catalog and tools/schemas.json by docs/hooks/ref_tools.py -->",
        "",
        "The tools of `colibri serve`, each with the schemas `tools/list` serves. Pattern A tools",
        "refuse with an error envelope (`isError: true`); Pattern B tools carry a domain's refusal",
        "inside a success envelope (`data.ok: false`): see [Envelopes](../explanation/envelopes.md).",
        "",
        "| tool | title | pattern | class | modes |",
        "|---|---|---|---|---|",
    ]
    for tool in catalog.TOOLS:
        modes = ", ".join(mode.value for mode in Mode if tool.admitted_in(mode))
        lines.append(
            f"| [`{tool.name}`](#{tool.name}) | {tool.title} | {tool.pattern.value} "
            f"| {tool.tool_class.value} | {modes} |"
        )
    lines.append("")
    for tool in catalog.TOOLS:
        if tool.name not in schemas:
            raise StaleSchemas(
                f"tool {tool.name} is not in {snapshot.PATH}: run `{snapshot.COMMAND}` to write it again"
            )
        lines += _tool(tool, schemas[tool.name])
    return "\n".join(lines) + "\n"


def _tool(tool: Any, schema: dict[str, Any]) -> list[str]:
    hints = [
        "reads only" if not tool.writes else "writes",
        "destructive" if tool.destructive else "",
        "idempotent" if tool.idempotent or not tool.writes else "",
    ]
    lines = [
        f"## {tool.name}",
        "",
        f"**{tool.title}** — pattern {tool.pattern.value}, class `{tool.tool_class.value}`, "
        + ", ".join(hint for hint in hints if hint)
        + ".",
        "",
        " ".join(tool.description.split()),
        "",
    ]
    lines += _arguments(schema["input"])
    for which in ("input", "output"):
        text = json.dumps(schema[which], indent=2, ensure_ascii=False)
        lines += [f'??? example "{which} schema"', "", "    ```json"]
        lines += [f"    {line}" for line in text.splitlines()]
        lines += ["    ```", ""]
    return lines


def _arguments(schema: dict[str, Any]) -> list[str]:
    properties: dict[str, Any] = schema.get("properties", {})
    if not properties:
        return ["No arguments.", ""]
    required = set(schema.get("required", []))
    rows = ["| argument | type | required | description |", "|---|---|---|---|"]
    for name, spec in properties.items():
        description = " ".join(str(spec.get("description", "")).split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {_type(spec)} | {'yes' if name in required else ''} | {description} |")
    return [*rows, ""]


def _type(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return " \\| ".join(f"`{value}`" for value in spec["enum"])
    if "anyOf" in spec:
        return " or ".join(_type(option) for option in spec["anyOf"])
    if "$ref" in spec:
        return str(spec["$ref"]).rsplit("/", 1)[-1]
    kind = spec.get("type", "any")
    if kind == "array":
        return f"array of {_type(spec.get('items', {}))}"
    return str(kind)
