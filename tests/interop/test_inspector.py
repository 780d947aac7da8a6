"""The MCP Inspector CLI (`npx @modelcontextprotocol/inspector --cli`, pinned 2.12.0) against Colibri:
it shows an error's message (it used to print a schema complaint and exit 1), `--strict` finds no
schema problem in any tool, and through the switchboard its one tools/list shows the downstream tools.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colibri.tools.catalog import TOOLS
from tests.interop.support import COLIBRI, inspector
from tests.switchboard.helpers import write_config

TOOL_IS_ERROR_EXIT = 5  # the Inspector's exit code for a result with isError: true


def _serve(tmp_path: Path) -> list[str]:
    return [
        "-e",
        f"COLIBRI_DB_PATH={tmp_path / 'colibri.db'}",
        "-e",
        f"COLIBRI_SKILLS_DIR={tmp_path}",
        COLIBRI,
        "serve",
    ]


@pytest.mark.parametrize(
    ("tool", "arguments", "code", "message"),
    [
        ("task_create", ["title=42"], "INVALID_PARAMS", "invalid arguments for task_create: title"),
        (
            "thought_record",
            ["session_id=nope", "kind=plan", "content=x"],
            "SESSION_NOT_FOUND",
            "nope is not an audit",
        ),
    ],
)
def test_the_inspector_shows_an_errors_code_and_message(
    tmp_path: Path, tool: str, arguments: list[str], code: str, message: str
) -> None:
    done = inspector(
        [*_serve(tmp_path), "--method", "tools/call", "--tool-name", tool, "--tool-arg", *arguments], tmp_path
    )
    assert done.returncode == TOOL_IS_ERROR_EXIT, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == code
    assert message in result["structuredContent"]["error"]["message"]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert "does not match" not in done.stdout + done.stderr


def test_strict_finds_no_schema_problem_in_any_tool(tmp_path: Path) -> None:
    done = inspector([*_serve(tmp_path), "--method", "tools/list", "--strict"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr and "Error" not in done.stderr, done.stderr[-3000:]
    assert sorted(tool["name"] for tool in json.loads(done.stdout)["tools"]) == sorted(
        tool.name for tool in TOOLS
    )


def test_through_the_switchboard_the_first_tools_list_shows_the_downstream_tools(tmp_path: Path) -> None:
    server = {"command": COLIBRI, "args": ["serve"], "env": {"COLIBRI_DB_PATH": str(tmp_path / "colibri.db")}}
    config = write_config(tmp_path, {"colibri": server})
    # The Inspector would take the switchboard's --config for its own: name the server in its config file.
    session = {
        "mcpServers": {"gateway": {"command": COLIBRI, "args": ["switchboard", "--config", str(config)]}}
    }
    (tmp_path / "inspector.json").write_text(json.dumps(session))
    done = inspector(
        [
            "--config",
            str(tmp_path / "inspector.json"),
            "--server",
            "gateway",
            "--method",
            "tools/list",
            "--strict",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr, done.stderr[-3000:]
    listed = {tool["name"] for tool in json.loads(done.stdout)["tools"]}
    assert listed == {"switchboard_status", *(f"colibri.{name}" for name in (tool.name for tool in TOOLS))}
