"""The TypeScript SDK client through `colibri switchboard`: a Colibri downstream's successes and errors
pass through; the switchboard's own refusal, timeout and lost-connection errors for a downstream tool
with an output schema reach the client as our message, not as a schema complaint thrown by callTool.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.helpers import clean_env
from tests.interop.support import COLIBRI, run_client, seen
from tests.switchboard.fault_server import WORK_OUTPUT
from tests.switchboard.helpers import FAULT_SERVER, switchboard_env, write_config

QUIET = {"liveness_s": 30, "readiness_s": 30, "check_timeout_s": 2, "restart_backoff_s": 5}


def _fault(name: str, mode: str, tmp_path: Path) -> dict[str, Any]:
    env = {"FAULT_NAME": name, "FAULT_MODE": mode, "FAULT_CONTROL": str(tmp_path / f"{name}.control.json")}
    return {"command": sys.executable, "args": [str(FAULT_SERVER)], "env": env}


def test_the_typescript_client_through_the_switchboard(tmp_path: Path) -> None:
    colibri_env = {key: value for key, value in clean_env(tmp_path).items() if key.startswith("COLIBRI_")}
    config = write_config(
        tmp_path,
        {
            "c": {"command": COLIBRI, "args": ["serve"], "env": colibri_env},
            "f": _fault("f", "answer", tmp_path),  # `work` answers, then times out, then is refused
            "g": _fault("g", "crash", tmp_path),  # `work` kills its process: the connection is lost mid-call
        },
        health={**QUIET, "call_timeout_s": 1, "failures_to_quarantine": 1, "cooldown_s": 120},
    )
    steps = [
        {"list": True},
        {"tool": "c.server_ping"},
        {"tool": "c.task_create", "arguments": {"title": "through the switchboard"}},
        {"tool": "c.task_get", "arguments": {"task_id": "T-999"}},
        {"tool": "c.task_create", "arguments": {"title": 42}},
        {"tool": "c.thought_record", "arguments": {"session_id": "nope", "kind": "plan", "content": "x"}},
        {"tool": "f.work", "arguments": {"value": 1}},
        {"tool": "f.set_mode", "arguments": {"mode": "timeout"}},
        {"tool": "f.work", "arguments": {"value": 2}},
        {"tool": "f.work", "arguments": {"value": 3}},
        {"tool": "g.work", "arguments": {"value": 4}},
    ]
    command = [COLIBRI, "switchboard", "--config", str(config)]
    report = run_client(
        {"command": command[0], "args": command[1:], "env": switchboard_env(), "steps": steps}, tmp_path
    )

    listed = report["steps"][0]
    # The first tools/list (the only one this client makes) already shows every downstream's tools.
    assert {"switchboard_status", "c.server_ping", "c.task_create", "f.work", "g.work"} <= set(listed["list"])
    work = next(tool for tool in listed["tools"] if tool["name"] == "f.work")
    assert work["outputSchema"] == WORK_OUTPUT

    ping, created, missing, invalid, unknown_session, worked, _, timed_out, refused, lost = map(
        seen, report["steps"][1:]
    )
    assert ping["ok"] is True and created["data"]["title"] == "through the switchboard"
    assert (
        missing["data"]["error"]["code"] == "ERR_NOT_FOUND" and "T-999" in missing["data"]["error"]["message"]
    )
    assert invalid["error"]["code"] == "INVALID_PARAMS" and "title" in invalid["error"]["message"]
    assert (
        unknown_session["error"]["code"] == "SESSION_NOT_FOUND"
        and "nope" in unknown_session["error"]["message"]
    )
    assert worked == {"echo": {"value": 1}, "server": "f", "call": 1}
    for step in report["steps"][2:6]:
        assert step["structuredContent"] is not None, "Colibri's envelopes pass through whole"

    assert (
        timed_out["error"]["code"] == "UPSTREAM_TIMEOUT"
        and "did not answer in time" in timed_out["error"]["message"]
    )
    assert (
        refused["error"]["code"] == "SERVICE_UNAVAILABLE" and "f quarantined" in refused["error"]["message"]
    )
    assert (
        lost["error"]["code"] == "UPSTREAM_ERROR" and lost["error"]["details"]["failure"] == "lost connection"
    )
    for step in report["steps"][8:11]:
        # The envelope would break `work`'s output schema, so it travels as the text block alone.
        assert step["isError"] is True and step["structuredContent"] is None, step
