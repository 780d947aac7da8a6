"""Every outcome of a routed request as rows of the audit store (SPEC §15), over stdio (the lean lane
carries the tools/call) with real downstreams: fallback attempts as one row each under one
correlation id, a timeout, nothing routable, an unknown tool, and server-everything's resources/read
and prompts/get as `server:resources/read` and `server:prompts/get` rows. The client here reads the
JSON-RPC lines themselves, so each row's result digest is checked against the JSON it received.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.switchboard.audit_helpers import Raw, answer_digest, arguments_column, calls
from tests.switchboard.everything import everything_entry
from tests.switchboard.helpers import FAST, Downstreams, write_config
from tests.switchboard.test_passthrough import ARCHITECTURE


def test_attempts_timeouts_and_refusals_are_rows(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {
            "first": downstreams.fault("first", "crash", idempotent=["work"]),
            "second": downstreams.fault("second"),
            "slow": downstreams.fault("slow", "timeout", tool_timeouts={"work": 0.3}),
            "gone": Downstreams.dead(),
        },
        fallbacks={"work": ["first.work", "second.work"], "lost": ["gone.work"]},
        health={**FAST, "restart_backoff_s": 30, "failures_to_quarantine": 5},
        audit={"db": "gateway.db"},
    )
    raw = Raw(config)
    try:
        for name in ("first", "second", "slow"):
            raw.wait_for(name, "HEALTHY")
        raw.wait_for("gone", "UNHEALTHY")
        fell_back = raw.call("work", {"value": 1})
        answers = [raw.call(name, {"value": 2}) for name in ("slow.work", "lost", "nowhere.work")]
    finally:
        raw.close()

    assert not fell_back.get("isError") and downstreams.calls("first") == downstreams.calls("second") == 1
    codes = [json.loads(answer["content"][0]["text"])["error"]["code"] for answer in answers]
    assert codes == ["UPSTREAM_TIMEOUT", "SERVICE_UNAVAILABLE", "UNKNOWN_TOOL"]
    rows = calls(tmp_path / "gateway.db")
    assert [(row["tool"], row["outcome"]) for row in rows] == [
        ("first.work", "error"),
        ("second.work", "ok"),
        ("slow.work", "timeout"),
        ("lost", "unavailable"),
        ("nowhere.work", "denied"),
    ]
    attempt, answered = rows[0], rows[1]
    assert attempt["correlation_id"] == answered["correlation_id"]
    assert attempt["arguments"] == answered["arguments"] == arguments_column({"value": 1})
    assert attempt["result_hash"] is None  # its answer never reached the client; the fallback's did
    assert answered["result_hash"] == answer_digest(fell_back)
    assert [row["result_hash"] for row in rows[2:]] == [answer_digest(answer) for answer in answers]
    assert rows[2]["duration_ms"] >= 300
    assert all(row["principal"] == "local" and row["log_index"] is not None for row in rows)


def test_resources_read_and_prompts_get_are_rows_with_their_digests(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, {"everything": everything_entry()}, health={"readiness_s": 60}, audit={"db": "gateway.db"}
    )
    asked = {"name": "everything.args-prompt", "arguments": {"city": "Lisbon", "state": "PT"}}
    raw = Raw(config)
    try:
        raw.wait_for("everything", "HEALTHY")
        read = raw.request("resources/read", {"uri": ARCHITECTURE})
        prompt = raw.request("prompts/get", asked)
        echoed = raw.call("everything.echo", {"message": "hi"})
    finally:
        raw.close()

    rows = calls(tmp_path / "gateway.db")
    assert [(row["tool"], row["outcome"]) for row in rows] == [
        ("everything:resources/read", "ok"),
        ("everything:prompts/get", "ok"),
        ("everything.echo", "ok"),
    ]
    assert [row["result_hash"] for row in rows] == [
        answer_digest(answer) for answer in (read, prompt, echoed)
    ]
    assert [row["arguments"] for row in rows] == [
        arguments_column({"uri": ARCHITECTURE}),
        arguments_column(asked),
        arguments_column({"message": "hi"}),
    ]


def test_a_reload_applies_policies_and_keeps_the_store_it_started_with(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    servers = {"echo": downstreams.fault("echo")}
    config = write_config(tmp_path, servers, health=FAST, audit={"db": "first.db"})
    raw = Raw(config, "--watch")
    try:
        raw.wait_for("echo", "HEALTHY")
        allowed = raw.call("echo.work", {"value": 1})
        policies = {"tokens_file": str(tmp_path / "tokens"), "policies": {"local": {"deny": ["echo.*"]}}}
        time.sleep(0.01)  # a distinct modification time
        write_config(tmp_path, servers, health=FAST, audit={"db": "second.db"}, auth=policies)
        deadline = time.monotonic() + 15
        while (refused := raw.call("echo.work", {"value": 2})).get("isError") is not True:
            assert time.monotonic() < deadline, "the reloaded policy never applied"
            time.sleep(0.1)
    finally:
        said = raw.close().decode()
    assert not allowed.get("isError")
    assert json.loads(refused["content"][0]["text"])["error"]["code"] == "TOOL_NOT_ADMITTED"
    assert "the audit section changed; calls are still recorded in" in said
    assert not (tmp_path / "second.db").exists()
    assert ("echo.work", "denied") in [(row["tool"], row["outcome"]) for row in calls(tmp_path / "first.db")]
