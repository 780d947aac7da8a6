"""A policy glob or a `per_tool` key that matches nothing the config holds is one warning line at
load naming it (SPEC §21); one that matches a configured server or a
fallback capability says nothing, and `per_tool` keys may be globs (`*.work` was refused). One
whose server exists but that matches none of the tools it lists is one warning line once that
server has first listed them (`echo.wrok` said nothing)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    RawSwitchboard,
    switchboard_command,
    switchboard_env,
    write_config,
)


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


def test_keys_that_match_none_of_a_servers_tools_are_one_warning_each_after_its_first_listing(
    tmp_path: Path,
) -> None:
    described = tmp_path / "described.txt"  # the fault server's `work` takes its description from it
    echo = Downstreams(tmp_path).fault("echo", health=FAST)
    echo["env"]["FAULT_DESCRIPTION_FILE"] = str(described)
    config = write_config(
        tmp_path,
        {"echo": echo},
        auth={
            "tokens_file": str(tmp_path / "tokens.jsonl"),
            # echo lists work, info, touch, set_mode, ...: `wrok` and `nope*` match none of them
            "policies": {"ci": {"allow": ["echo.wrok", "echo.w*", "echo:*"], "deny": ["echo.nope*"]}},
        },
        rate_limits={
            "per_tool": {
                "echo.wrok": {"calls_per_minute": 5},
                "e*.zz": {"calls_per_minute": 5},
                "echo.i*": {"calls_per_minute": 5},
                "echo:resources/read": {"calls_per_minute": 5},
            }
        },
    )
    board = RawSwitchboard(config, switchboard_env())
    try:
        client = {"name": "t", "version": "1"}
        board.request(
            "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
        )
        board.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # echo's tools are listed to a client only after the board has seen them (and judged the keys).
        _work_description(board, lambda description: description is not None)
        # A second listing (a changed description) is judged no more.
        described.write_text("work, described again")
        _work_description(board, lambda description: description == "work, described again")
    finally:
        _, stderr = board.finish()  # closes its stdin: the end of the session
    lines = stderr.decode().splitlines()
    warned = [line for line in lines if "matches none of the tools" in line]
    assert [line.split("WARNING colibri.switchboard: ")[1] for line in warned] == [
        "auth.policies.ci.allow: 'echo.wrok' matches none of the tools echo lists; it admits nothing",
        "auth.policies.ci.deny: 'echo.nope*' matches none of the tools echo lists; it denies nothing",
        'rate_limits.per_tool["echo.wrok"] matches none of the tools echo lists; it limits nothing',
        'rate_limits.per_tool["e*.zz"] matches none of the tools echo lists; it limits nothing',
    ], stderr.decode()
    assert not [line for line in lines if "matches no configured server" in line]  # nothing at load


def _work_description(board: RawSwitchboard, wanted: Callable[[str | None], bool]) -> None:
    """Ask tools/list until echo.work's description is what `wanted` accepts."""
    deadline = time.monotonic() + 30
    while True:
        tools = board.request("tools/list")["result"]["tools"]
        description = next((tool.get("description") for tool in tools if tool["name"] == "echo.work"), None)
        if wanted(description):
            return
        assert time.monotonic() < deadline, f"echo.work is listed as {description!r}"
        time.sleep(0.05)
