"""The schemas tools/list sends are kept in `colibri/tools/schemas.json` (snapshot.py), made when
the models last changed: they must be exactly what the models make now, or a served schema would
describe arguments or results the chain no longer takes or gives."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

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


def test_the_catalogue_comes_with_the_kept_schemas_before_any_is_made() -> None:
    # A fresh process: here another test may already have made (and cached) a tool's schemas, and
    # those equal the kept ones, so only a process that made none can tell adopted from made.
    probe = (
        "import json; from colibri.tools.catalog import TOOLS; print(json.dumps("
        "{t.name: [vars(t).get('input_schema'), vars(t).get('output_schema')] for t in TOOLS}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    held = json.loads(done.stdout)
    kept = snapshot.kept()
    assert held == {name: [schemas["input"], schemas["output"]] for name, schemas in kept.items()}


def test_a_tool_the_file_does_not_know_makes_its_own(tmp_path: Path) -> None:
    known, unknown = TOOLS[0], TOOLS[1]
    path = tmp_path / "schemas.json"
    snapshot.write([known], path)
    fresh = [replace(known), replace(unknown)]  # the same tools without their cached schemas
    snapshot.adopt(fresh, path)
    assert "input_schema" in vars(fresh[0])  # adopted: nothing left to make
    assert "input_schema" not in vars(fresh[1])
    assert fresh[1].output_schema == unknown.made_output_schema()
