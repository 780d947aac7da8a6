"""A policy glob or a `per_tool` key that matches nothing the config holds is one warning line at
load naming it (SPEC §21); one that matches a configured server or a
fallback capability says nothing, and `per_tool` keys may be globs (`*.work` was refused)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.switchboard.helpers import Downstreams, switchboard_command, switchboard_env, write_config


def test_keys_and_globs_that_match_nothing_are_one_warning_each(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"echo": Downstreams(tmp_path).fault("echo")},
        fallbacks={"search": ["echo.work"]},
        auth={
            "tokens_file": str(tmp_path / "tokens.jsonl"),
            "policies": {"ci": {"allow": ["echo.*", "sea*", "ecno.*"], "deny": ["evil.*", "echo:*"]}},
        },
        rate_limits={
            "per_tool": {
                "*.work": {"calls_per_minute": 5},
                "opne.*": {"calls_per_minute": 5},
                "echo.i*": {"calls_per_minute": 5},
            }
        },
    )
    # On stdio with stdin closed the switchboard loads, starts and stops at once.
    done = subprocess.run(
        switchboard_command(config),
        stdin=subprocess.DEVNULL,
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "matches no configured server" in line]
    assert len(warned) == 3, done.stderr
    assert (
        "auth.policies.ci.allow: 'ecno.*' matches no configured server or capability; it admits nothing"
        in warned[0]
    )
    assert (
        "auth.policies.ci.deny: 'evil.*' matches no configured server or capability; it denies nothing"
        in warned[1]
    )
    assert (
        'rate_limits.per_tool["opne.*"] matches no configured server or capability; it limits nothing'
        in warned[2]
    )
    assert done.stdout == ""
