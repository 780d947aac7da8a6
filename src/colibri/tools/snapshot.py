"""The catalogue's declarations, kept beside this module (`schemas.json`): what tools/list says of
each tool (title, description, class, the effect its annotations state) and its JSON schemas, made
once from the declarations and the models, so that a server does not make them again at every start.

Making the schemas is pydantic's schema generation for 14 tools: 28 schemas and an envelope model
created for each tool's result, ~75 ms. And with the declarations kept too, `colibri serve` answers
`initialize` and `tools/list` from this file alone, read with the stdlib json, while phase 2's thread
imports the chain, the handlers and the models (SPEC §25: cold start ≤ 1.1× a bare SDK server).
The file is generated, never edited:

    python -m colibri.tools

writes it again, and a test fails, naming that command, when it differs from what the catalogue
makes now. A tool the file does not know makes its own schemas on first use, as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from colibri.core.modes import Mode, ToolClass, admits

if TYPE_CHECKING:
    from colibri.core.spec import Tool

PATH = Path(__file__).with_name("schemas.json")
COMMAND = "python -m colibri.tools"


@dataclass(frozen=True, slots=True)
class Declared:
    """What tools/list says of one tool, without its models or handler: read from the kept file in
    phase 1, or taken from a `Tool` (`of`)."""

    name: str
    title: str
    description: str
    tool_class: ToolClass
    destructive: bool
    idempotent_effect: bool
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]

    @property
    def writes(self) -> bool:
        return self.tool_class is ToolClass.WRITE

    def admitted_in(self, mode: Mode) -> bool:
        return admits(mode, self.tool_class)

    @classmethod
    def of(cls, tool: Tool) -> Declared:
        """The declaration of `tool`, with its schemas as it serves them (kept, or made now)."""
        return cls.kept(tool.name, _entry(tool, tool.input_schema, tool.output_schema))

    @classmethod
    def kept(cls, name: str, entry: dict[str, Any]) -> Declared:
        return cls(
            name=name,
            title=entry["title"],
            description=entry["description"],
            tool_class=ToolClass(entry["tool_class"]),
            destructive=entry["destructive"],
            idempotent_effect=entry["idempotent_effect"],
            input_schema=entry["input"],
            output_schema=entry["output"],
        )


def _entry(tool: Tool, input_schema: dict[str, Any], output_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "title": tool.title,
        "description": tool.description,
        "tool_class": tool.tool_class.value,
        "destructive": tool.destructive,
        "idempotent_effect": tool.idempotent_effect,
        "input": input_schema,
        "output": output_schema,
    }


def made(tools: Iterable[Tool]) -> dict[str, dict[str, Any]]:
    """Each tool's entry as its declaration and its models make it now."""
    return {tool.name: _entry(tool, tool.made_input_schema(), tool.made_output_schema()) for tool in tools}


def kept(path: Path = PATH) -> dict[str, dict[str, Any]]:
    schemas: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return schemas


def declared(path: Path = PATH) -> list[Declared]:
    """Every kept tool, in the catalogue's order (phase 1's tools/list reads nothing else)."""
    return [Declared.kept(name, entry) for name, entry in kept(path).items()]


def adopt(tools: Iterable[Tool], path: Path = PATH) -> None:
    """Give each tool the file knows its kept schemas."""
    schemas = kept(path)
    for tool in tools:
        known = schemas.get(tool.name)
        if known is not None:
            tool.adopt_schemas(known["input"], known["output"])


def write(tools: Iterable[Tool], path: Path = PATH) -> None:
    path.write_text(json.dumps(made(tools), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
