"""The official TypeScript SDK client (`client.callTool`) against `colibri serve`: all 14 tools through a
realistic workflow and every error path of each. callTool never throws; the user sees our code and
message. Before output schemas admitted Pattern A, every error here reached the user as
"Structured content does not match the tool's output schema".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from colibri.tools.catalog import TOOLS
from tests.helpers import clean_env
from tests.interop.support import COLIBRI, run_client, seen

OK = "ok"
# (tool, arguments, what the user must see, key to save the result under)
Step = tuple[str, Any, Any, str | None]

S, T1, T2, T3 = "$s.data.session_id", "$t1.data.id", "$t2.data.id", "$t3.data.id"
NO_RECORD = "rec_" + "0" * 24

WORKFLOW: list[Step] = [
    ("server_ping", {}, OK, None),
    ("server_health", {}, OK, None),
    ("task_create", {"title": "Design the API", "priority": "high", "tags": ["api"]}, OK, "t1"),
    ("task_create", {"title": "Build it", "depends_on": [T1]}, OK, "t2"),
    ("task_create", {"title": "Ship it", "depends_on": [T2]}, OK, "t3"),
    ("task_get", {"task_id": T2}, OK, None),
    ("task_list", {"tag": "api", "limit": 10}, OK, None),
    ("task_next_actions", {"limit": 3}, OK, None),
    ("audit_session_start", {"purpose": "interop workflow", "agent_id": "ts-client"}, OK, "s"),
    ("task_update", {"task_id": T1, "status": "in_progress", "expected_version": 1}, OK, None),
    ("thought_record", {"session_id": S, "kind": "plan", "content": "outline"}, OK, None),
    (
        "thought_record",
        {"session_id": S, "kind": "writeback", "content": "API done", "task_id": T1},
        OK,
        "r",
    ),
    ("task_update", {"task_id": T1, "status": "review"}, OK, None),
    ("task_update", {"task_id": T1, "status": "done"}, OK, None),
    ("thought_record_list", {"session_id": S}, OK, None),
    ("audit_verify_chain", {}, OK, None),
    ("merkle_finalize", {"session_id": S}, OK, None),
    ("merkle_root", {"session_id": S, "record_id": "$r.data.record_id"}, OK, None),
    ("skill_list", {}, OK, None),
    ("skill_list", {"query": "demo"}, OK, None),
    # --- every error path: bad types, unknown ids, wrong transitions, unknown and sealed sessions ---
    ("server_ping", [1, 2], ("A", "INVALID_PARAMS"), None),
    ("server_health", "now", ("A", "INVALID_PARAMS"), None),
    ("task_create", {"title": 42}, ("A", "INVALID_PARAMS"), None),
    ("task_create", {}, ("A", "INVALID_PARAMS"), None),
    ("task_create", {"title": "x", "priority": "urgent"}, ("A", "INVALID_PARAMS"), None),
    ("task_create", {"title": "x", "depends_on": ["T-999"]}, ("B", "ERR_NOT_FOUND"), None),
    ("task_get", {"task_id": "T-999"}, ("B", "ERR_NOT_FOUND"), None),
    ("task_get", {"task_id": 7}, ("A", "INVALID_PARAMS"), None),
    ("task_update", {"task_id": "T-999", "title": "x"}, ("B", "ERR_NOT_FOUND"), None),
    ("task_update", {"task_id": T2, "status": "done"}, ("B", "ERR_INVALID_TRANSITION"), None),
    ("task_update", {"task_id": T1, "status": "todo"}, ("B", "ERR_INVALID_TRANSITION"), None),
    ("task_update", {"task_id": T2, "title": "y", "expected_version": 9}, ("B", "ERR_CONFLICT"), None),
    ("task_update", {"task_id": T3, "status": "in_progress"}, ("B", "ERR_DEPENDENCIES_OPEN"), None),
    ("task_update", {"task_id": T2, "status": "in_progress"}, OK, None),
    ("task_update", {"task_id": T2, "status": "review"}, OK, None),
    ("task_update", {"task_id": T2, "status": "done"}, ("B", "ERR_WRITEBACK_REQUIRED"), None),
    ("task_update", {"task_id": T2, "status": "finished"}, ("A", "INVALID_PARAMS"), None),
    ("task_list", {"limit": 0}, ("A", "INVALID_PARAMS"), None),
    ("task_list", {"status": "sleeping"}, ("A", "INVALID_PARAMS"), None),
    ("task_list", {"cursor": "not-a-cursor"}, ("A", "INVALID_PARAMS"), None),
    ("task_next_actions", {"limit": "many"}, ("A", "INVALID_PARAMS"), None),
    ("thought_record", {"session_id": "nope", "kind": "plan", "content": "x"}, ("A", "SESSION_NOT_FOUND"), None),  # noqa: E501
    ("thought_record", {"session_id": S, "kind": "plan", "content": "late"}, ("A", "SESSION_FINALIZED"), None),  # noqa: E501
    ("thought_record", {"session_id": S, "kind": "wish", "content": "x"}, ("A", "INVALID_PARAMS"), None),
    ("thought_record", {"session_id": "s", "kind": "plan"}, ("A", "INVALID_PARAMS"), None),
    ("thought_record_list", {"limit": 1000}, ("A", "INVALID_PARAMS"), None),
    ("thought_record_list", {"cursor": "not-a-cursor"}, ("A", "INVALID_PARAMS"), None),
    ("audit_verify_chain", {"from_seq": 0}, ("A", "INVALID_PARAMS"), None),
    ("audit_verify_chain", {"session_id": "no-such-session"}, ("A", "SESSION_NOT_FOUND"), None),
    ("audit_session_start", {"session_id": S}, ("B", "ERR_SESSION_EXISTS"), None),
    ("audit_session_start", {"session_id": "bad id!"}, ("A", "INVALID_PARAMS"), None),
    ("merkle_finalize", {"session_id": S}, ("B", "ERR_ALREADY_FINALIZED"), None),
    ("merkle_finalize", {"session_id": "no-such-session"}, ("B", "ERR_SESSION_NOT_FOUND"), None),
    ("merkle_finalize", {}, ("A", "INVALID_PARAMS"), None),
    ("audit_session_start", {"session_id": "empty-session"}, OK, None),
    ("merkle_finalize", {"session_id": "empty-session"}, ("B", "ERR_NO_RECORDS"), None),
    ("merkle_root", {"session_id": "empty-session"}, ("B", "ERR_NOT_FINALIZED"), None),
    ("merkle_root", {"session_id": "no-such-session"}, ("B", "ERR_SESSION_NOT_FOUND"), None),
    ("merkle_root", {"session_id": S, "record_id": NO_RECORD}, ("B", "ERR_NOT_FOUND"), None),
    ("merkle_root", {"session_id": S, "record_id": "r1"}, ("A", "INVALID_PARAMS"), None),
    ("skill_list", {"query": 5}, ("A", "INVALID_PARAMS"), None),
    ("task_delete", {"task_id": "T-1"}, ("A", "UNKNOWN_TOOL"), None),
]  # fmt: skip

# Wrong mode: a READONLY server on the same database refuses every write, and MINIMAL every domain tool.
READONLY_STEPS: list[Step] = [
    ("task_list", {}, OK, None),
    ("task_create", {"title": "x"}, ("A", "TOOL_NOT_ADMITTED"), None),
    ("task_update", {"task_id": "T-1", "title": "x"}, ("A", "TOOL_NOT_ADMITTED"), None),
    ("thought_record", {"session_id": "s", "kind": "plan", "content": "x"}, ("A", "TOOL_NOT_ADMITTED"), None),
    ("audit_session_start", {}, ("A", "TOOL_NOT_ADMITTED"), None),
    ("merkle_finalize", {"session_id": "s"}, ("A", "TOOL_NOT_ADMITTED"), None),
]
MINIMAL_STEPS: list[Step] = [
    ("server_health", {}, OK, None),
    ("task_get", {"task_id": "T-1"}, ("A", "TOOL_NOT_ADMITTED"), None),
    ("skill_list", {}, ("A", "TOOL_NOT_ADMITTED"), None),
]


def _spec(env: dict[str, str], steps: list[Step]) -> dict[str, Any]:
    return {
        "command": COLIBRI,
        "args": ["serve"],
        "env": env,
        "steps": [{"list": True}]
        + [{"tool": tool, "arguments": arguments, "save": save} for tool, arguments, _, save in steps],
    }


def _check(report: dict[str, Any], steps: list[Step]) -> list[dict[str, Any]]:
    """Every call's envelope is what the step expects; the errors' envelopes, for more checks."""
    errors, wrong = [], []
    for (tool, arguments, expected, _), entry in zip(steps, report["steps"][1:], strict=True):
        envelope = seen(entry)
        if expected == OK:
            got = "ok" if envelope["ok"] is True and envelope["data"].get("ok") is not False else envelope
        else:
            error = envelope.get("error") or envelope.get("data", {}).get("error") or {}
            pattern = "A" if envelope["ok"] is False else "B"
            got = (pattern, error.get("code"))
            assert len(error.get("message", "")) > 20, envelope
            errors.append(envelope)
        if got != expected:
            wrong.append(f"{tool}({arguments}): expected {expected}, got {got}")
    assert not wrong, "\n".join(wrong)
    return errors


def _skills(tmp_path: Path) -> Path:
    skill = tmp_path / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: demo\ndescription: A demo skill for the interop tests.\n---\nBody\n"
    )
    return tmp_path / "skills"


def test_every_tool_and_every_error_path_reach_the_typescript_client_intact(tmp_path: Path) -> None:
    _skills(tmp_path)
    report = run_client(_spec(clean_env(tmp_path), WORKFLOW), tmp_path)
    listed = report["steps"][0]
    assert sorted(listed["list"]) == sorted(tool.name for tool in TOOLS)
    assert {step[0] for step in WORKFLOW} >= {tool.name for tool in TOOLS}, "every tool is driven"
    for tool in listed["tools"]:
        assert tool["title"] and tool["annotations"]["openWorldHint"] is False, tool["name"]
        assert tool["outputSchema"]["type"] == "object", tool["name"]
    errors = _check(report, WORKFLOW)
    # Pattern A errors, the ones the client used to throw away, got through with their structuredContent.
    pattern_a = [envelope for envelope in errors if envelope["ok"] is False]
    assert len(pattern_a) == sum(1 for step in WORKFLOW if step[2] != OK and step[2][0] == "A")
    assert all(entry["structuredContent"] is not None for entry in report["steps"][1:])
    late = next(
        i for i, step in enumerate(WORKFLOW) if isinstance(step[1], dict) and step[1].get("content") == "late"
    )
    message = seen(report["steps"][1 + late])["error"]["message"]
    assert "finalized" in message or "sealed" in message, message


@pytest.mark.parametrize(("mode", "steps"), [("READONLY", READONLY_STEPS), ("MINIMAL", MINIMAL_STEPS)])
def test_the_wrong_mode_is_explained_to_the_typescript_client(
    tmp_path: Path, mode: str, steps: list[Step]
) -> None:
    run_client(_spec(clean_env(tmp_path), [("task_create", {"title": "seed"}, OK, None)]), tmp_path)
    report = run_client(_spec(clean_env(tmp_path, COLIBRI_MODE=mode), steps), tmp_path)
    for envelope in _check(report, steps):
        assert mode in envelope["error"]["message"], envelope
