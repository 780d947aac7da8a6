"""The official TypeScript SDK client (npm, pinned) in front of the switchboard, server-everything behind."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.switchboard.everything import NPM_FOLDER, TS_CLIENT, everything_entry, node
from tests.switchboard.helpers import Downstreams, switchboard_command, switchboard_env, write_config

TS_CALL = NPM_FOLDER / "ts_call.mjs"
TS_ROUNDS = NPM_FOLDER / "ts_rounds.mjs"


def run_node(script: Path, config: Path, *args: str) -> list[str]:
    """The lines a TypeScript client script printed, driving a switchboard on `config`."""
    finished = subprocess.run(
        [node(), str(script), *args, *switchboard_command(config)],
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    return finished.stdout.strip().splitlines()


def test_the_typescript_client_gets_the_whole_protocol_through(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"everything": everything_entry()}, health={"readiness_s": 60})
    seen = json.loads(run_node(TS_CLIENT, config)[-1])
    assert "demo://resource/static/document/architecture.md" in seen["resources"]
    assert "demo://resource/dynamic/text/{resourceId}" in seen["templates"]
    assert seen["read"] == "demo://resource/static/document/architecture.md"
    assert "everything.args-prompt" in seen["prompts"]
    assert "Porto" in seen["prompt"]
    assert "Engineering" in seen["completion"]
    # The TypeScript client drops a progress notification that arrives with the result; it does so
    # calling server-everything directly too, so only the ones before the last are certain.
    assert seen["progress"][:2] == [1, 2]
    assert seen["sampled"] and "from typescript" in seen["sampled"][0]
    assert "sampled by the TypeScript client" in seen["sampling"]
    # server-everything's log lines come on their own, outside any call: they belong to no call and
    # are dropped (SPEC §21); a call's own log lines reach its client (test_own_calls.py).
    assert seen["updated"] and set(seen["updated"]) == {"demo://resource/static/document/architecture.md"}


def test_the_typescript_clients_calls_take_the_lean_lane(tmp_path: Path) -> None:
    """The fault server reports the request id it saw: "sb-N" is the lean lane's, an integer the SDK's."""
    config = write_config(tmp_path, {"f": Downstreams(tmp_path).fault("f")}, health={"readiness_s": 60})
    calls = [["f.info", {}], ["f.work", {"value": 3}], ["f.nope", {}]]
    info, work, unknown = (json.loads(line) for line in run_node(TS_CALL, config, json.dumps(calls))[-3:])
    assert info["structuredContent"]["request_id"].startswith("sb-"), info
    assert work["structuredContent"] == {"echo": {"value": 3}, "server": "f", "call": 1}
    # An unknown tool is the switchboard's own envelope, which the TypeScript client reads as is.
    assert unknown["isError"] is True and unknown["structuredContent"]["error"]["code"] == "UNKNOWN_TOOL"


def test_the_2026_era_typescript_client_answers_input_requests(tmp_path: Path) -> None:
    """The TypeScript SDK v2 client (@modelcontextprotocol/client, 2026-07-28) gets server-everything's
    sampling and elicitation requests as input requests through the switchboard, and their answers
    reach the tools."""
    config = write_config(tmp_path, {"everything": everything_entry()}, health={"readiness_s": 60})
    seen = json.loads(run_node(TS_ROUNDS, config)[-1])
    assert seen["version"] == "2026-07-28", seen
    assert seen["sampled"] and "from the v2 client" in seen["sampled"][0], seen
    assert "sampled by the v2 client" in seen["sampling"], seen
    assert seen["elicited"] and "Please provide inputs" in seen["elicited"][0], seen
    assert "Ada from TypeScript" in seen["elicitation"], seen
