"""tools/list lists exactly the admitted tools of the effective mode, each with both schemas."""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri.core.modes import Mode
from colibri.tools.catalog import TOOLS, admitted_tools
from tests.helpers import call, clean_env, connect, ok_data

pytestmark = pytest.mark.anyio

_CATALOGUE = {tool.name: tool for tool in TOOLS}


async def _migrate_once(tmp_path: Path) -> None:
    async with connect(clean_env(tmp_path)) as client:
        ok_data(await call(client, "server_ping"))


@pytest.mark.parametrize("mode", list(Mode))
async def test_lists_exactly_the_admitted_tools_with_schemas(tmp_path: Path, mode: Mode) -> None:
    if mode is Mode.READONLY:
        await _migrate_once(tmp_path)  # READONLY needs an existing, migrated file
    async with connect(clean_env(tmp_path, COLIBRI_MODE=mode.value.lower())) as client:
        tools = (await client.list_tools()).tools
        health = ok_data(await call(client, "server_health"))
    assert sorted(tool.name for tool in tools) == sorted(admitted_tools(mode))
    assert health["mode"] == mode.value
    assert health["phase"] == "phase2"
    for tool in tools:
        assert tool.description
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None
        assert tool.output_schema["type"] == "object"
        success, failure = tool.output_schema["anyOf"]
        assert success["properties"]["ok"] == {"const": True, "title": "Ok", "type": "boolean"}
        assert failure["properties"]["ok"] == {"const": False, "title": "Ok", "type": "boolean"}
        assert "$ref" not in str(tool.output_schema), "schemas are advertised self-contained"
        assert tool.title
        assert tool.annotations is not None
        assert tool.annotations.title == tool.title
        assert tool.annotations.read_only_hint is not _CATALOGUE[tool.name].writes
        assert tool.annotations.open_world_hint is False
        assert tool.annotations.destructive_hint is not None
        assert tool.annotations.idempotent_hint is not None


async def test_admission_table_knows_all_fourteen_tools() -> None:
    assert len(admitted_tools(Mode.FULL)) == 14
    assert len(admitted_tools(Mode.READONLY)) == 9
    assert admitted_tools(Mode.MINIMAL) == ["server_ping", "server_health"]
