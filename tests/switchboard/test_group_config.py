"""Who a policy or a rate limit names (config/callers.py, SPEC §20): a principal or `group:NAME`.
An empty or malformed group, and any other name holding ':', stop the start with exit 2 naming
the JSON path (a reload is refused the same way: test_group_policies)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import Limit, Policy, parse


def text(policies: dict[str, Any] | None = None, **limits: Any) -> str:
    sections: dict[str, Any] = {"auth": {"tokens_file": "t", "policies": policies or {}}}
    if limits:
        sections["rate_limits"] = limits
    return json.dumps({"mcpServers": {"git": {"command": "git-mcp"}}, **sections})


def test_groups_load_beside_principals() -> None:
    config = parse(
        text(
            {
                "group:sre": {"allow": ["*"]},
                "group:/eng/Site Reliability": {"deny": ["git.push"]},
                "ana": {"allow": ["git.log"]},
            },
            per_principal={
                "group:sre": {"calls_per_minute": 30, "burst": 3},
                "local": {"calls_per_minute": 5},
            },
        )
    )
    assert config.policies["group:sre"] == Policy("group:sre", ("*",))
    assert config.policies["group:/eng/Site Reliability"] == Policy(
        "group:/eng/Site Reliability", None, ("git.push",)
    )
    assert config.rate_limits.per_principal == {"group:sre": Limit(30, 3), "local": Limit(5, 5)}


ALLOW = {"allow": ["*"]}


@pytest.mark.parametrize(
    ("key", "path", "expected"),
    [
        ("group:", 'auth.policies["group:"]', "the name of an IdP group after 'group:'"),
        ("group: sre", 'auth.policies["group: sre"]', "no space at either end; got 'group: sre'"),
        ("group:sre\n", 'auth.policies["group:sre\\n"]', "got 'group:sre\\n'"),
        ("group:s\u202ere", 'auth.policies["group:s\\u202ere"]', "no control or bidirectional characters"),
        ("group:" + "x" * 257, None, "1 to 256 characters"),
        ("groups:sre", 'auth.policies["groups:sre"]', "'groups:sre' is reserved"),
        ("Group:sre", 'auth.policies["Group:sre"]', "written group:NAME (e.g. group:sre)"),
        ("local:ana", 'auth.policies["local:ana"]', "is reserved"),
        ("", 'auth.policies[""]', "a principal's name"),
    ],
)
def test_a_malformed_caller_of_a_policy_names_its_json_path(
    key: str, path: str | None, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(text({"ana": ALLOW, key: ALLOW}))
    assert caught.value.path == (path or f"auth.policies[{json.dumps(key)}]")
    assert expected in caught.value.message


@pytest.mark.parametrize(
    ("key", "expected"),
    [("group:", "after 'group:'"), ("group:sre ", "no space at either end"), ("team:sre", "is reserved")],
)
def test_a_malformed_caller_of_a_rate_limit_names_its_json_path(key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(text(per_principal={key: {"calls_per_minute": 5}}))
    assert caught.value.path == f"rate_limits.per_principal[{json.dumps(key)}]"
    assert expected in caught.value.message


def test_a_rate_limit_of_a_caller_is_checked_as_a_limit() -> None:
    with pytest.raises(ConfigError) as caught:
        parse(text(per_principal={"group:sre": {"calls_per_minute": 5, "burts": 2}}))
    assert caught.value.path == 'rate_limits.per_principal["group:sre"]'
    assert "did you mean 'burst'?" in caught.value.message


def test_the_command_exits_2_naming_an_empty_group(tmp_path: Path) -> None:
    config = tmp_path / "switchboard.json"
    config.write_text(text({"group:": ALLOW}))
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "switchboard", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f'colibri switchboard: {config}: auth.policies["group:"]: expected group:NAME with the name of an '
        "IdP group after 'group:' (e.g. group:sre)"
    ]
