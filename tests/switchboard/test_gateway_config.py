"""The audited gateway's sections (SPEC §15): audit, pins, auth.policies, rate_limits — what they
become, and a malformed entry → exit 2 with its JSON path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import AuditSpec, Limit, Policy, load, parse

SERVERS = {"git": {"command": "git-mcp"}, "search-a": {"command": "a"}, "search-b": {"command": "b"}}


def text(**sections: Any) -> str:
    return json.dumps(
        {"mcpServers": SERVERS, "fallbacks": {"search": ["search-a.find", "search-b.find"]}, **sections}
    )


def test_the_sections_load_with_paths_relative_to_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "switchboard.json"
    path.parent.mkdir()
    path.write_text(
        text(
            audit={"db": "audit/gateway.db", "signing_key": "../keys/gateway.key"},
            auth={"tokens_file": "t", "policies": {"ci": {"allow": ["git.*"], "deny": ["git.push"]}}},
            rate_limits={
                "per_token": {"calls_per_minute": 5},
                "per_tool": {
                    "git.commit": {"calls_per_minute": 30, "burst": 2},
                    "search": {"calls_per_minute": 1},
                },
            },
        )
    )
    config = load(path)
    assert config.audit == AuditSpec(path.parent / "audit/gateway.db", path.parent / "../keys/gateway.key")
    assert config.pins == "block"
    assert config.policies == {"ci": Policy("ci", ("git.*",), ("git.push",))}
    assert config.rate_limits.per_token == Limit(5, 5)
    assert config.rate_limits.per_tool == {"git.commit": Limit(30, 2), "search": Limit(1, 1)}


def test_pins_are_off_without_an_audit_store_and_may_be_chosen_with_one() -> None:
    assert parse(text()).pins == "off"
    assert parse(text(audit={"db": "a.db"}, pins="warn")).pins == "warn"
    assert parse(text(audit={"db": "a.db"}, pins="off")).pins == "off"


def test_the_store_url_expands_variables_and_names_no_password() -> None:
    config = parse(
        text(audit={"db_url": "postgresql://gw:${PG_PASSWORD}@db.internal/audit", "signing_key": "k"}),
        {"PG_PASSWORD": "s3cret"},
    )
    assert config.audit is not None
    assert config.audit.target == "postgresql://gw:s3cret@db.internal/audit"
    assert "s3cret" not in str(config.audit)


@pytest.mark.parametrize(
    ("policy", "name", "admitted"),
    [
        (Policy("t", ("git.*",)), "git.commit", True),
        (Policy("t", ("git.*",)), "search", False),
        (Policy("t", None, ("git.push",)), "git.push", False),
        (Policy("t", None, ("git.push",)), "git:resources/read", True),
        (Policy("t", ("git:*",)), "git:prompts/get", True),
        (Policy("t", ("*",), ("*.delete*",)), "git.delete_branch", False),
    ],
)
def test_a_policy_admits_what_allow_matches_and_deny_does_not(
    policy: Policy, name: str, admitted: bool
) -> None:
    assert policy.admits(name) is admitted


@pytest.mark.parametrize(
    ("sections", "path", "expected"),
    [
        ({"auth": {"tokens_file": "t", "policies": {"ci": []}}}, "auth.policies.ci", "valid dictionary"),
        ({"auth": {"tokens_file": "t", "policies": {"ci": {}}}}, "auth.policies.ci", '"allow" and/or "deny"'),
        (
            {"auth": {"tokens_file": "t", "policies": {"ci": {"alow": ["*"]}}}},
            "auth.policies.ci",
            "did you mean 'allow'?",
        ),
        (
            {"auth": {"tokens_file": "t", "policies": {"ci": {"deny": ["git.*", ""]}}}},
            "auth.policies.ci.deny[1]",
            "non-empty string",
        ),
        (
            {"rate_limits": {"per_token": {"calls_per_minute": 0}}},
            "rate_limits.per_token.calls_per_minute",
            "> 0",
        ),
        (
            {"rate_limits": {"per_token": {"calls_per_minute": 5, "burts": 2}}},
            "rate_limits.per_token",
            "did you mean 'burst'?",
        ),
        (
            {"rate_limits": {"per_tool": {"git.commit": {"calls_per_minute": 5, "burst": 0}}}},
            'rate_limits.per_tool["git.commit"].burst',
            ">= 1",
        ),
        (
            {"rate_limits": {"per_tool": {"gti.commit": {"calls_per_minute": 5}}}},
            'rate_limits.per_tool["gti.commit"]',
            "server.tool (a configured server)",
        ),
        ({"rate_limits": {"per_minute": 5}}, "rate_limits", "unknown key 'per_minute'"),
        ({"audit": {"db": "a.db", "db_url": "postgresql://x/y"}}, "audit", 'exactly one of "db"'),
        ({"audit": {"signing_key": "k"}}, "audit", 'exactly one of "db"'),
        ({"audit": {"db_url": "postgresql://x/y"}}, "audit.signing_key", "required with db_url"),
        ({"audit": {"db_url": "mysql://x/y"}}, "audit.db_url", "expected"),
        ({"audit": {"dbpath": "a.db"}}, "audit", "unknown key 'dbpath'"),
        ({"pins": "block"}, "pins", "needs an audit store"),
        ({"audit": {"db": "a.db"}, "pins": "strict"}, "pins", "one of 'block', 'warn' or 'off'"),
    ],
)
def test_a_malformed_entry_names_its_json_path(sections: dict[str, Any], path: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(text(**sections))
    assert caught.value.path == path
    assert expected in caught.value.message


def test_the_command_exits_2_naming_a_malformed_policy(tmp_path: Path) -> None:
    config = tmp_path / "switchboard.json"
    config.write_text(text(auth={"tokens_file": "t", "policies": {"ci": {"allow": "git.*"}}}))
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
        f'colibri switchboard: {config}: auth.policies.ci.allow: expected a valid list, got "git.*"'
    ]
