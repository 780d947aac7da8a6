"""Crafted cursors are refused as INVALID_PARAMS: never a RecursionError, never an overflow."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from colibri.core.cursor import decode_cursor, encode_cursor
from colibri.domains.tasks.arguments import ListTasksArgs
from tests.helpers import call, chain_error, clean_env, connect, ok_data

pytestmark = pytest.mark.anyio


REFUSAL = "cursor is not one this server issued"


def _crafted(payload: bytes) -> str:
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


HOSTILE = [
    _crafted(b"[" * 3000),
    _crafted(b"after:" + b"[" * 3000),
    _crafted(f"after:{2**63}".encode()),
    _crafted(f"after:{10**400}".encode()),
    _crafted(b"after:-1"),
    _crafted(b"after:1e400"),
    "A" * 10_000,
    "!!!",
    # the shape of the cursors task_list gave before the cursor codecs became one
    "c1." + _crafted(b'{"after": ' + b"[" * 3000 + b"}"),
    "c1." + _crafted(json.dumps({"after": 10**400}).encode()),
]


@pytest.mark.parametrize("cursor", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_cursors_are_value_errors(cursor: str) -> None:
    with pytest.raises(ValueError, match=REFUSAL):
        decode_cursor(cursor)
    with pytest.raises(ValidationError):
        ListTasksArgs.model_validate({"cursor": cursor})


def test_the_largest_position_still_round_trips() -> None:
    assert decode_cursor(encode_cursor(2**63 - 1)) == 2**63 - 1


async def test_hostile_cursors_and_numbers_are_invalid_params_over_the_wire(tmp_path: Path) -> None:
    async with connect(clean_env(tmp_path)) as client:
        for cursor in HOSTILE[:3]:
            error = chain_error(await call(client, "task_list", {"cursor": cursor}))
            assert error["code"] == "INVALID_PARAMS", error
        for cursor in (base64.urlsafe_b64encode(b"after:" + b"9" * 40).decode(), "[" * 3000):
            error = chain_error(await call(client, "thought_record_list", {"cursor": cursor}))
            assert error["code"] == "INVALID_PARAMS", error
        created = ok_data(await call(client, "task_create", {"title": "t"}))
        for version in (2**63, 2**64, -(2**63) - 1):
            arguments = {"task_id": created["id"], "title": "u", "expected_version": version}
            error = chain_error(await call(client, "task_update", arguments))
            assert error["code"] == "INVALID_PARAMS", error
        for seq in (2**63, 10**30):
            error = chain_error(await call(client, "audit_verify_chain", {"from_seq": seq}))
            assert error["code"] == "INVALID_PARAMS", error
