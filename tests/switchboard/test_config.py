"""Config loading: defaults, overrides, and a bad file → exit 2 with the JSON path of the problem."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from colibri.cli import main
from colibri.serving.address import parse_address
from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import HealthPolicy, Target, load, parse

GOOD = {
    "mcpServers": {
        "colibri": {"command": "colibri", "args": ["serve"], "env": {"COLIBRI_MODE": "FULL"}},
        "search-a": {
            "url": "http://127.0.0.1:9001/mcp",
            "health": {"deep": {"tool": "search", "arguments": {"q": "test"}}, "cooldown_s": 0.5},
            "idempotent": ["search"],
        },
        "search-b": {"command": "search-b", "health": {"liveness_s": 0.25}},
    },
    "fallbacks": {"search": ["search-a.search", "search-b.search"]},
    "health": {"liveness_s": 10, "readiness_s": 30, "deep_s": 300, "failures_to_quarantine": 3},
}


def with_changes(**changes: Any) -> str:
    config = json.loads(json.dumps(GOOD))
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = config
        for key in parents:
            node = node[key]
        if value is None:
            del node[last]
        else:
            node[last] = value
    return json.dumps(config)


def test_the_spec_example_loads_with_defaults_and_overrides() -> None:
    config = parse(json.dumps(GOOD))
    colibri, search_a, search_b = config.servers
    assert colibri.transport == "stdio" and colibri.args == ("serve",)
    assert colibri.env == {"COLIBRI_MODE": "FULL"}
    assert colibri.health == HealthPolicy()
    assert search_a.transport == "http"
    assert search_a.health.cooldown_s == 0.5
    assert search_a.deep is not None and search_a.deep.arguments == {"q": "test"}
    assert search_a.idempotent == frozenset({"search"})
    assert search_b.health.liveness_s == 0.25 and search_b.health.cooldown_s == 60
    assert config.fallbacks == {"search": (Target("search-a", "search"), Target("search-b", "search"))}


def test_config_objects_are_frozen() -> None:
    config = parse(json.dumps(GOOD))
    with pytest.raises(AttributeError):
        config.servers[0].health.cooldown_s = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        (with_changes(mcpServers__colibri__command=None), "mcpServers.colibri.command", '"command" (a stdio'),
        (
            with_changes(fallbacks__search=["search-a.search", "search-c.search"]),
            "fallbacks.search[1]",
            "unknown server 'search-c'",
        ),
        (with_changes(health__liveness_s=-1), "health.liveness_s", "a number of seconds > 0, got -1"),
        (
            with_changes(**{"mcpServers__search-b__health": {"readiness_s": -0.5}}),
            "mcpServers.search-b.health.readiness_s",
            "> 0, got -0.5",
        ),
        ('{"mcpServers": {"a": {"command": "x"}', "$", "invalid JSON at line 1 column 38"),
        ("[]", "$", "expected a JSON object"),
        ('{"servers": {}}', "mcpServers", "required key is missing"),
        # Another client's top-level key is set aside (test_configs_people_have.py); a near miss of
        # one of the switchboard's own is refused.
        ('{"mcpServers": {"a": {"command": "x"}}, "fallback": {}}', "$", "unknown key 'fallback'"),
        ('{"mcpServers": {}}', "mcpServers", "non-empty"),
        (with_changes(mcpServers__colibri__comand="x"), "mcpServers.colibri", "unknown key 'comand'"),
        (with_changes(health__failures_to_quarantine=0), "health.failures_to_quarantine", "integer >= 1"),
        (with_changes(health__cooldown_s="60"), "health.cooldown_s", 'valid number, got "60"'),
        (with_changes(health__cooldown_max_s=5), "health.cooldown_max_s", ">= cooldown_s (60)"),
        (with_changes(fallbacks__search=["search-a"]), "fallbacks.search[0]", 'expected "server.tool"'),
        (
            with_changes(fallbacks__switchboard_status=["colibri.x"]),
            "fallbacks.switchboard_status",
            "capability",
        ),
        (with_changes(**{"mcpServers__search-a__args": ["x"]}), "mcpServers.search-a", "stdio servers only"),
        (with_changes(mcpServers__colibri__url="http://x/mcp"), "mcpServers.colibri.url", "not both"),
        (with_changes(**{"mcpServers__search-a__url": "ftp://x"}), "mcpServers.search-a.url", "http://"),
        ('{"mcpServers": {"a.b": {"command": "x"}}}', 'mcpServers["a.b"]', "server name"),
        (
            with_changes(**{"mcpServers__search-a__health__deep": {"arguments": {}}}),
            "mcpServers.search-a.health.deep.tool",
            "required key is missing",
        ),
    ],
)
def test_a_bad_config_names_the_path_and_what_was_expected(text: str, path: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(text)
    assert caught.value.path == path
    assert expected in caught.value.message
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        (
            with_changes(health__call_timeout_s=float("inf")),
            "health.call_timeout_s",
            "expected a finite number of seconds, got Infinity",
        ),
        (
            with_changes(**{"mcpServers__search-b__health": {"liveness_s": float("inf")}}),
            "mcpServers.search-b.health.liveness_s",
            "expected a finite number of seconds, got Infinity",
        ),
        (
            with_changes(health__cooldown_max_s=float("-inf")),
            "health.cooldown_max_s",
            "expected a finite number of seconds, got -Infinity",
        ),
        (
            with_changes(health__check_timeout_s=float("nan")),
            "health.check_timeout_s",
            "expected a finite number of seconds, got NaN",
        ),
        (
            with_changes(mcpServers__colibri__command=""),
            "mcpServers.colibri.command",
            'expected a non-empty string, got ""',
        ),
    ],
)
def test_non_finite_seconds_and_an_empty_command_are_refused_plainly(
    text: str, path: str, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(text)
    assert (caught.value.path, caught.value.message) == (path, message)


def test_an_unreadable_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (with_changes(mcpServers__colibri__command=None), "mcpServers.colibri.command"),
        (with_changes(fallbacks__search=["search-a.search", "nowhere.search"]), "fallbacks.search[1]"),
        (with_changes(health__call_timeout_s=-3), "health.call_timeout_s"),
        (with_changes(health__call_timeout_s=float("inf")), "health.call_timeout_s"),
        ('{"mcpServers": {', "$"),
    ],
)
def test_the_command_exits_2_with_one_line_naming_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, path: str
) -> None:
    config = tmp_path / "bad.json"
    config.write_text(text)
    assert main(["switchboard", "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"colibri switchboard: {config}: {path}: ")


def test_a_real_process_exits_2_on_negative_intervals(tmp_path: Path) -> None:
    config = tmp_path / "bad.json"
    config.write_text(with_changes(**{"mcpServers__search-b__health": {"liveness_s": -10}}))
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "switchboard", "status", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"colibri switchboard: {config}: mcpServers.search-b.health.liveness_s: "
        "expected a number of seconds > 0, got -10"
    ]


def test_bad_http_address_and_log_level_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "good.json"
    config.write_text(json.dumps(GOOD))
    assert main(["switchboard", "--config", str(config), "--http", "localhost:http"]) == 2
    assert "expected HOST:PORT" in capsys.readouterr().err
    monkeypatch.setenv("COLIBRI_LOG_LEVEL", "chatty")
    assert main(["switchboard", "--config", str(config)]) == 2
    assert "COLIBRI_LOG_LEVEL='chatty' is not valid" in capsys.readouterr().err


def test_http_addresses() -> None:
    assert parse_address("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_address("[::1]:9000") == ("::1", 9000)
    assert parse_address("9000") == ("127.0.0.1", 9000)
    assert parse_address(":9000") == ("127.0.0.1", 9000)
    for bad in ("host:0", "host:70000", "host:", "host:x"):
        with pytest.raises(ValueError, match="expected HOST:PORT"):
            parse_address(bad)
