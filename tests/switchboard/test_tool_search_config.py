"""`"tool_search"` in the switchboard's config (SPEC §23): what it becomes, and each malformed value
refused with its JSON path at load (exit 2) and at reload (the running config kept)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import ToolSearch, parse

SERVERS = {"git": {"command": "git-mcp"}, "a": {"command": "a"}}


def text(tool_search: Any, **sections: Any) -> str:
    return json.dumps({"mcpServers": SERVERS, "tool_search": tool_search, **sections})


def test_the_section_loads_and_is_off_by_default() -> None:
    assert parse(json.dumps({"mcpServers": SERVERS})).tool_search == ToolSearch("off", ())
    loaded = parse(text({"mode": "search", "keep": ["git.*", "switchboard_status"]})).tool_search
    assert loaded.on and loaded.keeps("git.status") and loaded.keeps("switchboard_status")
    assert not loaded.keeps("a.x")


@pytest.mark.parametrize(
    ("tool_search", "sections", "path", "said"),
    [
        ("search", {}, "tool_search", "expected an object"),
        ({"mode": "on"}, {}, "tool_search.mode", 'expected "search" or "off", got \'on\''),
        ({"mode": "search", "keeps": []}, {}, "tool_search", "did you mean 'keep'?"),
        ({"keep": "git.*"}, {}, "tool_search.keep", "expected a list of globs"),
        ({"keep": ["git.*", ""]}, {}, "tool_search.keep[1]", "non-empty glob"),
        ({"keep": [3]}, {}, "tool_search.keep[0]", "non-empty glob"),
        ({"mode": "search"}, {"fallbacks": {"find_tools": ["a.find"]}}, "fallbacks.find_tools", "own tool"),
    ],
)
def test_a_malformed_section_names_its_path(
    tool_search: Any, sections: dict[str, Any], path: str, said: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        parse(text(tool_search, **sections))
    assert refused.value.path == path and said in refused.value.message, refused.value


def test_a_bad_section_stops_the_start_with_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "switchboard.json"
    config.write_text(text({"mode": "all"}))
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "switchboard", "run", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "tool_search.mode" in done.stderr, done.stderr
