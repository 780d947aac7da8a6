"""The schemas tools/list sends are kept in `colibri/tools/schemas.json` (snapshot.py), made when
the models last changed: they must be exactly what the models make now, or a served schema would
describe arguments or results the chain no longer takes or gives."""

from __future__ import annotations

from pathlib import Path

from colibri.core.spec import Tool
from colibri.tools import snapshot
from colibri.tools.catalog import TOOLS


def test_the_kept_schemas_are_what_the_models_make_now() -> None:
    kept, made = snapshot.kept(), snapshot.made(TOOLS)
    assert sorted(kept) == sorted(made), (
        f"schemas.json holds the tools {sorted(kept)}, the catalogue has {sorted(made)}: "
        f"run `{snapshot.COMMAND}`"
    )
    stale = [name for name in made if kept[name] != made[name]]
    assert not stale, f"the kept schemas of {stale} differ from their models': run `{snapshot.COMMAND}`"


def test_the_catalogue_serves_the_kept_schemas() -> None:
    kept = snapshot.kept()
    for tool in TOOLS:
        assert tool.input_schema == kept[tool.name]["input"]
        assert tool.output_schema == kept[tool.name]["output"]


def test_a_tool_the_file_does_not_know_makes_its_own(tmp_path: Path) -> None:
    known, unknown = TOOLS[0], TOOLS[1]
    path = tmp_path / "schemas.json"
    snapshot.write([known], path)
    fresh = [_copy(known), _copy(unknown)]
    snapshot.adopt(fresh, path)
    assert "input_schema" in vars(fresh[0])  # adopted: nothing left to make
    assert "input_schema" not in vars(fresh[1])
    assert fresh[1].output_schema == unknown.made_output_schema()


def _copy(tool: Tool) -> Tool:
    """The same tool without its cached or adopted schemas."""
    return type(tool)(
        tool.name,
        tool.title,
        tool.description,
        tool.input_model,
        tool.output_model,
        tool.handler,
        tool.pattern,
        tool.destructive,
        tool.idempotent,
        tool_class=tool.tool_class,
        quick=tool.quick,
    )
