"""`${VAR}` and `${VAR:-default}` expansion, and resource-template matching."""

from __future__ import annotations

import pytest

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import expand, expand_servers
from colibri.switchboard.downstream import template_matches

ENV = {"HOME": "/home/a", "EMPTY": "", "TOKEN": "t"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${HOME}/bin", "/home/a/bin"),
        ("${MISSING:-/opt}/bin", "/opt/bin"),
        ("${EMPTY:-fallback}", "fallback"),
        ("${EMPTY}", ""),
        ("Bearer ${TOKEN}", "Bearer t"),
        ("$HOME and ${ not a variable", "$HOME and ${ not a variable"),
        ("${MISSING:-}", ""),
    ],
)
def test_expansion(text: str, expected: str) -> None:
    assert expand(text, ("x",), ENV) == expected


def test_only_the_fields_that_start_or_reach_a_server_expand() -> None:
    raw = {
        "mcpServers": {
            "s": {"command": "${HOME}/s", "args": ["${TOKEN}"], "description": "${NOT_EXPANDED}"},
        }
    }
    entry = expand_servers(raw, ENV).raw["mcpServers"]["s"]
    assert entry == {"command": "/home/a/s", "args": ["t"], "description": "${NOT_EXPANDED}"}
    assert raw["mcpServers"]["s"]["command"] == "${HOME}/s", "the raw file is not changed"


def test_an_unset_variable_names_itself_and_the_path() -> None:
    with pytest.raises(ConfigError) as refused:
        expand_servers({"mcpServers": {"s": {"env": {"KEY": "${NOPE}"}}}}, ENV)
    assert refused.value.path == "mcpServers.s.env.KEY"
    assert "NOPE is not set" in refused.value.message


@pytest.mark.parametrize(
    ("template", "uri", "matches"),
    [
        ("demo://text/{id}", "demo://text/7", True),
        ("demo://text/{id}", "demo://blob/7", False),
        ("file:///{+path}", "file:///a/b.txt", True),
        ("x://a.b/{id}", "x://aXb/1", False),
    ],
)
def test_template_matching(template: str, uri: str, matches: bool) -> None:
    assert template_matches(template, uri) is matches
