"""The acceptance flow through a real `colibri serve` subprocess: a session, thoughts of every
kind, every list filter and pagination, a seal, and an inclusion proof for every record —
each proof checked by the package's verifier and by a second one written here from the RFC."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from colibri.domains.proofs.merkle import verify_proof
from tests.domains.trail.helpers import KINDS, insert_task
from tests.helpers import call, connect, ok_data

pytestmark = pytest.mark.anyio

RECORD_FIELDS = {
    "record_id",
    "seq",
    "session_id",
    "kind",
    "content",
    "task_id",
    "agent_id",
    "created_at",
    "prev_hash",
    "hash",
    "principal",  # who wrote it, as the server proved it (SPEC §14); stdio: local
}


def _h(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def rfc_root(leaf: bytes, m: int, n: int, path: list[bytes]) -> bytes | None:
    """The tree head that PATH(m, D[n]) (RFC 9162 §2.1.3.1) leads to from leaf data `leaf`.

    The RFC defines, with k the largest power of two smaller than n:
        PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n])       for m < k
        PATH(m, D[n]) = PATH(m - k, D[k:n]) : MTH(D[0:k])   for m >= k
    so the last element is the sibling at the top, and MTH(D[n]) = HASH(0x01 || left || right).
    """
    if n == 1:
        return _h(b"\x00" + leaf) if not path else None
    if not path:
        return None
    k = 1 << ((n - 1).bit_length() - 1)
    *inner, top = path
    if m < k:
        left = rfc_root(leaf, m, k, inner)
        return None if left is None else _h(b"\x01" + left + top)
    right = rfc_root(leaf, m - k, n - k, inner)
    return None if right is None else _h(b"\x01" + top + right)


def rfc_verifies(proof: dict[str, Any], root: str) -> bool:
    path = [bytes.fromhex(node) for node in proof["audit_path"]]
    if not 0 <= proof["leaf_index"] < proof["tree_size"]:
        return False
    computed = rfc_root(bytes.fromhex(proof["record_hash"]), proof["leaf_index"], proof["tree_size"], path)
    return computed is not None and computed.hex() == root


@pytest.mark.sqlite_only  # reads or alters the SQLite file itself
async def test_session_thoughts_lists_seal_and_a_verifying_proof_for_every_record(
    server_env: dict[str, str],
) -> None:
    async with connect(server_env) as client:
        insert_task(Path(server_env["COLIBRI_DB_PATH"]), "T-1")
        started = ok_data(
            await call(client, "audit_session_start", {"agent_id": "agent-1", "purpose": "e2e"})
        )
        assert set(started) == {"session_id", "started_at"}
        session = started["session_id"]
        assert (
            ok_data(await call(client, "audit_session_start", {"session_id": "other-1"}))["session_id"]
            == "other-1"
        )

        written, head = await _record_every_kind_twice(client, session)
        await _list_with_every_filter_and_page(client, session, written)
        whole = ok_data(await call(client, "audit_verify_chain"))
        log = whole.pop("log")
        assert log["tree_matches_entries"] and log["entries_match_rows"] and log["first_difference"] is None
        assert whole == {"valid": True, "checked": 24, "head_hash": head, "first_break": None, "seal": None}

        sealed = ok_data(await call(client, "merkle_finalize", {"session_id": session}))
        assert set(sealed) == {"session_id", "root", "leaf_count", "finalized_at", "checkpoint"}
        assert sealed["session_id"] == session and sealed["leaf_count"] == 12
        root = ok_data(await call(client, "merkle_root", {"session_id": session}))
        assert root == {
            "root": sealed["root"],
            "leaf_count": 12,
            "finalized_at": sealed["finalized_at"],
            "algorithm": "rfc9162-sha256",
            "proof": None,
            "checkpoint": sealed["checkpoint"],
        }
        await _prove_every_record(client, session, written)

        checked = ok_data(await call(client, "audit_verify_chain", {"session_id": session}))
        # checked counts the whole chain (24): the session's records are linked through the others.
        assert checked["valid"] and checked["checked"] == 24 and checked["head_hash"] == written[-1]["hash"]
        assert checked["seal"] == {
            "session_id": session,
            "sealed_root": sealed["root"],
            "computed_root": sealed["root"],
            "sealed_leaf_count": 12,
            "computed_leaf_count": 12,
            "stored_tree_intact": True,
            "valid": True,
        }


async def _record_every_kind_twice(client: Client, session: str) -> tuple[list[dict[str, Any]], str]:
    """12 records in `session`, each followed by one in other-1; returns them and the chain head."""
    written, previous = [], "0" * 64
    for i, kind in enumerate(KINDS * 2):
        args: dict[str, Any] = {"session_id": session, "kind": kind, "content": f'{kind} #{i}: é "quoted" 😀'}
        if i % 3 == 0:
            args["task_id"] = "T-1"
        if i % 2 == 0:
            args["agent_id"] = "agent-1"
        data = ok_data(await call(client, "thought_record", args))
        assert set(data) == {"record_id", "seq", "session_id", "hash", "prev_hash", "created_at"}
        assert data["prev_hash"] == previous and data["record_id"] == "rec_" + data["hash"][:24]
        written.append(data)
        other = {"session_id": "other-1", "kind": "plan", "content": f"o{i}"}
        previous = ok_data(await call(client, "thought_record", other))["hash"]
    assert [r["seq"] for r in written] == list(range(1, 24, 2))
    return written, previous


async def _list_with_every_filter_and_page(
    client: Client, session: str, written: list[dict[str, Any]]
) -> None:
    pages, cursor = [], None
    while True:
        args = {"session_id": session, "limit": 5} | ({"cursor": cursor} if cursor else {})
        page = ok_data(await call(client, "thought_record_list", args))
        assert set(page) == {"records", "next_cursor"}
        pages.append(page["records"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [len(p) for p in pages] == [5, 5, 2]
    listed = [record for page in pages for record in page]
    assert [r["record_id"] for r in listed] == [r["record_id"] for r in written]
    assert all(set(r) == RECORD_FIELDS for r in listed)
    assert listed[3]["content"] == 'observation #3: é "quoted" 😀' and listed[3]["task_id"] == "T-1"
    assert listed[1]["agent_id"] is None and listed[0]["agent_id"] == "agent-1"
    assert {r["principal"] for r in listed} == {"local"}
    assert [(r["seq"], r["hash"], r["prev_hash"]) for r in listed] == [
        (r["seq"], r["hash"], r["prev_hash"]) for r in written
    ]

    by_kind = ok_data(await call(client, "thought_record_list", {"kind": "decision"}))["records"]
    assert [r["seq"] for r in by_kind] == [written[2]["seq"], written[8]["seq"]]
    by_task = ok_data(await call(client, "thought_record_list", {"task_id": "T-1"}))["records"]
    assert [r["seq"] for r in by_task] == [written[i]["seq"] for i in (0, 3, 6, 9)]
    args = {"kind": "plan", "session_id": "other-1", "limit": 200}
    plans = ok_data(await call(client, "thought_record_list", args))
    assert len(plans["records"]) == 12 and plans["next_cursor"] is None


async def _prove_every_record(client: Client, session: str, written: list[dict[str, Any]]) -> None:
    for index, record in enumerate(written):
        args = {"session_id": session, "record_id": record["record_id"]}
        answer = ok_data(await call(client, "merkle_root", args))
        proof = answer["proof"]
        assert set(proof) == {"leaf_index", "tree_size", "record_hash", "audit_path"}
        assert (proof["leaf_index"], proof["tree_size"], proof["record_hash"]) == (index, 12, record["hash"])
        assert verify_proof(proof, answer["root"]), proof
        assert rfc_verifies(proof, answer["root"]), proof
        assert not rfc_verifies({**proof, "leaf_index": (index + 1) % 12}, answer["root"])
        assert not rfc_verifies({**proof, "record_hash": written[(index + 1) % 12]["hash"]}, answer["root"])
        assert not verify_proof({**proof, "record_hash": written[(index + 1) % 12]["hash"]}, answer["root"])
