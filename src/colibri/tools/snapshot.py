"""The catalogue's JSON schemas, made once from the models and kept beside this module
(`schemas.json`), so that a server does not make them again at every start.

Making them is pydantic's schema generation for 14 tools: 28 schemas and an envelope model created
for each tool's result, ~75 ms, most of what a cold start of `colibri serve` does beyond the SDK's
own (SPEC §18: ≤ 1.1× a bare SDK server). The file is generated, never edited:

    python -m colibri.tools

writes it again, and a test fails, naming that command, when it differs from what the models make
now. A tool the file does not know makes its own schemas on first use, as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from colibri.core.spec import Tool

PATH = Path(__file__).with_name("schemas.json")
COMMAND = "python -m colibri.tools"


def made(tools: Iterable[Tool]) -> dict[str, dict[str, Any]]:
    """Each tool's schemas as its models make them now."""
    return {
        tool.name: {"input": tool.made_input_schema(), "output": tool.made_output_schema()} for tool in tools
    }


def kept(path: Path = PATH) -> dict[str, dict[str, Any]]:
    schemas: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return schemas


def adopt(tools: Iterable[Tool], path: Path = PATH) -> None:
    """Give each tool the file knows its kept schemas."""
    schemas = kept(path)
    for tool in tools:
        known = schemas.get(tool.name)
        if known is not None:
            tool.adopt_schemas(known["input"], known["output"])


def write(tools: Iterable[Tool], path: Path = PATH) -> None:
    path.write_text(json.dumps(made(tools), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
