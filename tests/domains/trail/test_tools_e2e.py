"""The ζ tools through a real `colibri serve` subprocess: Pattern A errors and their messages."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from colibri.core.cursor import encode_cursor
from tests.domains.trail.helpers import raw_connection
from tests.helpers import call, chain_error, clean_env, connect, ok_data

pytestmark = pytest.mark.anyio


def _issues(env: dict[str, Any]) -> dict[str, str]:
    error = chain_error(env)
    assert error["code"] == "INVALID_PARAMS", error
    return {issue["path"]: issue["message"] for issue in error["details"]["issues"]}


def _refusal(env: dict[str, Any], code: str, subject: str) -> str:
    """A Pattern A refusal with the domain's own code (not HANDLER_ERROR with it in the message)."""
    error = chain_error(env)
    assert error["code"] == code and subject in error["details"].values(), error
    assert error["message"].startswith(f"{subject} "), error
    return str(error["message"])


async def test_thought_record_refuses_bad_input_with_the_field_and_what_is_allowed(
    server_env: dict[str, str],
) -> None:
    async with connect(server_env) as client:
        session = ok_data(await call(client, "audit_session_start", {"session_id": "s-1"}))["session_id"]
        good = {"session_id": session, "kind": "plan", "content": "x"}

        issues = _issues(await call(client, "thought_record", {**good, "kind": "musing"}))
        assert "'plan', 'analysis', 'decision', 'observation', 'reflection' or 'writeback'" in issues["kind"]
        issues = _issues(await call(client, "thought_record", {**good, "content": "x" * 65_537}))
        assert "at most 65536 characters" in issues["content"]
        assert ok_data(await call(client, "thought_record", {**good, "content": "é" * 65_536}))["seq"] == 1
        assert (
            "at least 1 character"
            in _issues(await call(client, "thought_record", {**good, "content": ""}))["content"]
        )
        for field, value in (("session_id", 5), ("task_id", True), ("agent_id", ["a"]), ("content", 3.5)):
            issues = _issues(await call(client, "thought_record", {**good, field: value}))
            assert issues[field] == "Input should be a valid string", issues
        assert set(_issues(await call(client, "thought_record", {}))) == {"session_id", "kind", "content"}

        message = _refusal(
            await call(client, "thought_record", {**good, "session_id": "ghost"}),
            "SESSION_NOT_FOUND",
            "ghost",
        )
        assert "audit_session_start" in message
        message = _refusal(
            await call(client, "thought_record", {**good, "task_id": "T-77"}), "TASK_NOT_FOUND", "T-77"
        )
        assert "task_list" in message

        sealed = await call(client, "merkle_finalize", {"session_id": session})
        assert sealed["data"]["leaf_count"] == 1
        message = _refusal(await call(client, "thought_record", good), "SESSION_FINALIZED", session)
        assert "audit_session_start" in message and sealed["data"]["finalized_at"] in message


async def test_listing_and_verifying_refuse_bad_arguments(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        for limit in (0, 201, "5", 2.0, True):
            assert "limit" in _issues(await call(client, "thought_record_list", {"limit": limit}))
        issues = _issues(await call(client, "thought_record_list", {"cursor": "not-a-cursor"}))
        assert "pass next_cursor from the previous page unchanged" in issues["cursor"]
        assert "kind" in _issues(await call(client, "thought_record_list", {"kind": "dream"}))
        _refusal(
            await call(client, "thought_record_list", {"session_id": "nope"}), "SESSION_NOT_FOUND", "nope"
        )
        _refusal(await call(client, "thought_record_list", {"task_id": "T-3"}), "TASK_NOT_FOUND", "T-3")
        assert ok_data(await call(client, "thought_record_list")) == {"records": [], "next_cursor": None}

        issues = _issues(await call(client, "audit_verify_chain", {"from_seq": 9, "to_seq": 2}))
        assert "from_seq (9) must not be greater than to_seq (2)" in issues[""]
        assert "from_seq" in _issues(await call(client, "audit_verify_chain", {"from_seq": 0}))
        assert "to_seq" in _issues(await call(client, "audit_verify_chain", {"to_seq": "7"}))
        for huge in (2**63, 10**30):  # beyond SQLite's integers: refused as input, not a crash
            for field in ("from_seq", "to_seq"):
                message = _issues(await call(client, "audit_verify_chain", {field: huge}))[field]
                assert str(2**63 - 1) in message
        largest = ok_data(
            await call(client, "audit_verify_chain", {"from_seq": 2**63 - 1, "to_seq": 2**63 - 1})
        )
        assert largest["valid"] and largest["checked"] == 0
        forged = encode_cursor(2**63)
        issues = _issues(await call(client, "thought_record_list", {"cursor": forged}))
        assert "pass next_cursor from the previous page unchanged" in issues["cursor"]
        _refusal(
            await call(client, "audit_verify_chain", {"session_id": "nope"}), "SESSION_NOT_FOUND", "nope"
        )


@pytest.mark.sqlite_only  # reads or alters the SQLite file itself
async def test_audit_verify_chain_reports_a_break_made_behind_the_servers_back(
    server_env: dict[str, str],
) -> None:
    async with connect(server_env) as client:
        session = ok_data(await call(client, "audit_session_start"))["session_id"]
        for i in range(6):
            ok_data(
                await call(
                    client, "thought_record", {"session_id": session, "kind": "analysis", "content": f"t{i}"}
                )
            )
        conn = raw_connection(Path(server_env["COLIBRI_DB_PATH"]))
        conn.execute("UPDATE thought_records SET agent_id = 'mallory' WHERE seq = 4")
        conn.close()
        report = ok_data(await call(client, "audit_verify_chain"))
        assert report["valid"] is False and report["checked"] == 6
        brk = report["first_break"]
        assert (brk["seq"], brk["reason"], brk["found"]) == (4, "hash_mismatch", report_hash(server_env, 4))
        ranged = ok_data(await call(client, "audit_verify_chain", {"from_seq": 5, "to_seq": 6}))
        assert ranged["valid"] and ranged["checked"] == 2 and ranged["first_break"] is None


def report_hash(env: dict[str, str], seq: int) -> str:
    conn = raw_connection(Path(env["COLIBRI_DB_PATH"]))
    try:
        return str(conn.execute("SELECT hash FROM thought_records WHERE seq = ?", (seq,)).fetchone()[0])
    finally:
        conn.close()


@pytest.mark.sqlite_only  # reads or alters the SQLite file itself
async def test_the_read_tools_work_in_readonly_mode_and_change_nothing(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    async with connect(server_env) as client:
        session = ok_data(await call(client, "audit_session_start"))["session_id"]
        for i in range(4):
            ok_data(
                await call(
                    client, "thought_record", {"session_id": session, "kind": "plan", "content": f"p{i}"}
                )
            )
        ok_data(await call(client, "merkle_finalize", {"session_id": session}))
    db_path = Path(server_env["COLIBRI_DB_PATH"])
    before = hashlib.sha256(db_path.read_bytes()).hexdigest()
    readonly = clean_env(tmp_path, COLIBRI_MODE="READONLY", COLIBRI_DB_PATH=str(db_path))
    async with connect(readonly) as client:
        assert ok_data(await call(client, "audit_verify_chain"))["valid"]
        assert ok_data(await call(client, "audit_verify_chain", {"session_id": session}))["seal"]["valid"]
        records = ok_data(await call(client, "thought_record_list", {"session_id": session}))["records"]
        answer = ok_data(
            await call(client, "merkle_root", {"session_id": session, "record_id": records[2]["record_id"]})
        )
        assert answer["proof"]["leaf_index"] == 2
        refused = chain_error(
            await call(client, "thought_record", {"session_id": session, "kind": "plan", "content": "x"})
        )
        assert refused["code"] == "TOOL_NOT_ADMITTED"
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == before
