"""The η tools through a real `colibri serve` subprocess: Pattern B refusals and bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.domains.trail.helpers import raw_connection
from tests.helpers import call, chain_error, connect, domain_error, ok_data

pytestmark = pytest.mark.anyio


def _refusal(env: dict[str, Any], code: str) -> str:
    """The Pattern B error: a success envelope whose data says ok=false."""
    assert env["ok"] is True and set(env["data"]) == {"ok", "error"}, env
    error = domain_error(env)
    assert error["code"] == code, error
    return str(error["message"])


def _invalid(env: dict[str, Any], field: str) -> str:
    error = chain_error(env)
    assert error["code"] == "INVALID_PARAMS", error
    return str(next(issue["message"] for issue in error["details"]["issues"] if issue["path"] == field))


async def test_sessions_seals_and_roots_refuse_with_the_spec_codes(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        started = ok_data(
            await call(client, "audit_session_start", {"session_id": "s-1", "purpose": "codes"})
        )
        message = _refusal(
            await call(client, "audit_session_start", {"session_id": "s-1"}), "ERR_SESSION_EXISTS"
        )
        assert started["started_at"] in message and "omit it to get a generated one" in message

        message = _refusal(
            await call(client, "merkle_finalize", {"session_id": "ghost"}), "ERR_SESSION_NOT_FOUND"
        )
        assert "audit_session_start" in message
        message = _refusal(await call(client, "merkle_finalize", {"session_id": "s-1"}), "ERR_NO_RECORDS")
        assert "thought_record" in message
        message = _refusal(await call(client, "merkle_root", {"session_id": "s-1"}), "ERR_NOT_FINALIZED")
        assert "merkle_finalize" in message
        _refusal(await call(client, "merkle_root", {"session_id": "ghost"}), "ERR_SESSION_NOT_FOUND")

        mine = ok_data(
            await call(client, "thought_record", {"session_id": "s-1", "kind": "plan", "content": "a"})
        )
        ok_data(await call(client, "audit_session_start", {"session_id": "s-2"}))
        theirs = ok_data(
            await call(client, "thought_record", {"session_id": "s-2", "kind": "plan", "content": "b"})
        )
        sealed = ok_data(await call(client, "merkle_finalize", {"session_id": "s-1"}))
        message = _refusal(
            await call(client, "merkle_finalize", {"session_id": "s-1"}), "ERR_ALREADY_FINALIZED"
        )
        assert sealed["root"] in message and "merkle_root" in message

        args = {"session_id": "s-1", "record_id": theirs["record_id"]}
        message = _refusal(await call(client, "merkle_root", args), "ERR_NOT_FOUND")
        assert "belongs to session 's-2'" in message
        args = {"session_id": "s-1", "record_id": "rec_" + "f" * 24}
        assert "thought_record_list" in _refusal(await call(client, "merkle_root", args), "ERR_NOT_FOUND")
        proof = ok_data(
            await call(client, "merkle_root", {"session_id": "s-1", "record_id": mine["record_id"]})
        )
        assert proof["proof"] == {
            "leaf_index": 0,
            "tree_size": 1,
            "record_hash": mine["hash"],
            "audit_path": [],
        }
        assert proof["root"] == sealed["root"]


async def test_bad_arguments_are_invalid_params_before_any_rule_runs(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        assert "pattern" in _invalid(
            await call(client, "audit_session_start", {"session_id": "has space"}), "session_id"
        )
        assert "at most 128" in _invalid(
            await call(client, "audit_session_start", {"session_id": "a" * 129}), "session_id"
        )
        for tool in ("audit_session_start", "merkle_finalize", "merkle_root"):
            assert (
                _invalid(await call(client, tool, {"session_id": 42}), "session_id")
                == "Input should be a valid string"
            )
        assert (
            _invalid(await call(client, "audit_session_start", {"agent_id": 7}), "agent_id")
            == "Input should be a valid string"
        )
        assert "Field required" in _invalid(await call(client, "merkle_finalize", {}), "session_id")
        message = _invalid(
            await call(client, "merkle_root", {"session_id": "s", "record_id": "R-1"}), "record_id"
        )
        assert "pattern" in message
        assert _invalid(
            await call(client, "merkle_root", {"session_id": "s", "record_id": 1}), "record_id"
        ) == ("Input should be a valid string")


@pytest.mark.sqlite_only  # reads or alters the SQLite file itself
async def test_a_damaged_stored_tree_refuses_proofs_and_fails_the_seal_check(
    server_env: dict[str, str],
) -> None:
    async with connect(server_env) as client:
        ok_data(await call(client, "audit_session_start", {"session_id": "s-3"}))
        written = [
            ok_data(
                await call(client, "thought_record", {"session_id": "s-3", "kind": "plan", "content": f"{i}"})
            )
            for i in range(3)
        ]
        ok_data(await call(client, "merkle_finalize", {"session_id": "s-3"}))
        args = {"session_id": "s-3", "record_id": written[0]["record_id"]}
        assert ok_data(await call(client, "merkle_root", args))["proof"]["leaf_index"] == 0

        conn = raw_connection(Path(server_env["COLIBRI_DB_PATH"]))
        # leaf 1's stored node, on leaf 0's audit path, zeroed in place
        conn.execute(
            "UPDATE merkle_nodes SET hashes = CAST(substr(hashes, 1, 32) || zeroblob(32)"
            " || substr(hashes, 65) AS BLOB) WHERE session_id = 's-3' AND level = 0"
        )
        conn.close()
        message = _refusal(await call(client, "merkle_root", args), "ERR_PROOF_STORE_DAMAGED")
        assert "audit_verify_chain" in message and "colibri verify" in message
        report = ok_data(await call(client, "audit_verify_chain", {"session_id": "s-3"}))
        assert report["valid"] is False and report["first_break"] is None
        assert report["seal"]["stored_tree_intact"] is False
        assert report["seal"]["computed_root"] == report["seal"]["sealed_root"]
