"""The `approvals` section (SPEC §22) is checked at load, and so at every reload (which loads the file
the same way and keeps the running config when it is refused): each problem names its JSON path and
what would be right; a glob that matches no tool now is a warning, since its server may come later."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import parse
from tests.switchboard.helpers import Downstreams, switchboard_command, switchboard_env, write_config

RULE = {"tools": ["echo.work"], "approvers": ["carol"], "mode": "approver"}


def _parsed(approvals: Any, audit: bool = True) -> Any:
    text = {"mcpServers": {"echo": {"command": "echo"}}, "approvals": approvals}
    if audit:
        text["audit"] = {"db": "audit.db"}
    return parse(json.dumps(text), {}, folder=Path("/tmp"))


@pytest.mark.parametrize(
    ("approvals", "path", "said"),
    [
        ({"rules": [RULE | {"mode": "vote"}]}, "approvals.rules[0].mode", '"approver"'),
        ({"rules": [RULE | {"approvers": []}]}, "approvals.rules[0].approvers", "non-empty array"),
        ({"rules": [{"tools": ["echo.work"]}]}, "approvals.rules[0].approvers", "non-empty array"),
        ({"rules": [RULE | {"tools": []}]}, "approvals.rules[0].tools", "globs over server.tool"),
        (
            {"rules": [RULE | {"approvers": ["group:"]}]},
            'approvals.rules[0].approvers["group:"]',
            "group:NAME",
        ),
        ({"rules": [RULE | {"approver": ["carol"]}]}, "approvals.rules[0]", "unknown key 'approver'"),
        ({"rules": []}, "approvals.rules", "non-empty array of rules"),
        ({"rules": [RULE], "timeout_s": 0}, "approvals.timeout_s", "seconds > 0"),
        ({"rules": [RULE], "ttl": 5}, "approvals", "unknown key 'ttl'"),
        ([RULE], "approvals", 'object with "rules"'),
    ],
)
def test_a_bad_section_is_refused_naming_its_json_path(approvals: Any, path: str, said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _parsed(approvals)
    assert refused.value.path == path and said in refused.value.message, refused.value


def test_approvals_need_an_audit_store_and_ask_user_needs_no_approvers() -> None:
    with pytest.raises(ConfigError) as refused:
        _parsed({"rules": [RULE]}, audit=False)
    assert refused.value.path == "approvals" and '"audit"' in refused.value.message
    config = _parsed(
        {"rules": [{"tools": ["echo.*"], "mode": "ask_user"}, RULE | {"principals": ["group:sre"]}]}
    )
    assert config.approvals is not None
    first, _ = config.approvals.rules
    assert (first.mode, first.approvers, first.principals) == ("ask_user", (), ("*",))
    assert config.approvals.rule_for("echo.work", "ana") is first
    assert (config.approvals.timeout_s, config.approvals.ttl_s) == (120.0, 900.0)


def test_the_switchboard_exits_2_on_a_bad_rule_and_warns_of_a_glob_matching_no_tool(tmp_path: Path) -> None:
    echo = Downstreams(tmp_path).fault("echo")
    bad = write_config(
        tmp_path, {"echo": echo}, audit={"db": "a.db"}, approvals={"rules": [RULE | {"mode": "x"}]}
    )
    refused = _run(bad)
    assert refused.returncode == 2 and "approvals.rules[0].mode" in refused.stderr, refused.stderr
    rules = {"rules": [RULE | {"tools": ["shell.*", "echo.work"]}]}
    fine = write_config(tmp_path, {"echo": echo}, audit={"db": "a.db"}, approvals=rules)
    done = _run(fine)  # on stdio with stdin closed it loads, starts and stops at once
    assert done.returncode == 0, done.stderr
    assert "approvals.rules[0].tools[0]: 'shell.*' matches no configured server" in done.stderr, done.stderr


def _run(config: Path) -> subprocess.CompletedProcess[str]:
    command = switchboard_command(config)
    env = switchboard_env()
    return subprocess.run(
        command, stdin=subprocess.DEVNULL, env=env, capture_output=True, text=True, timeout=60, check=False
    )
