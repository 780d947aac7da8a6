"""The official TypeScript SDK client (npm, pinned) in front of the switchboard, server-everything behind."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.switchboard.everything import TS_CLIENT, everything_entry, node
from tests.switchboard.helpers import switchboard_command, switchboard_env, write_config


def test_the_typescript_client_gets_the_whole_protocol_through(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"everything": everything_entry()}, health={"readiness_s": 60})
    finished = subprocess.run(
        [node(), str(TS_CLIENT), *switchboard_command(config)],
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    seen = json.loads(finished.stdout.strip().splitlines()[-1])
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
    assert seen["logs"] >= 1
    assert seen["updated"] and set(seen["updated"]) == {"demo://resource/static/document/architecture.md"}
