"""An audited switchboard's answers carry its own log's receipt (SPEC §22, issue 42).

Over stdio (the lean lane, the client reading the JSON lines themselves) in front of a real
`colibri serve`: a tools/call that reaches the Colibri and one refused as unknown each carry
`_meta["io.colibri/receipt"]` naming the gateway's store (origin `colibri/<its id>`), the entry of
the call's row (recomputed from the row with rfc8785), and that row's result_hash is the digest of
the answer less that receipt. The Colibri's own receipt for the same call is passed on beside it as
`io.colibri/downstream-receipt`, naming the Colibri's log and its row. Over HTTP (the SDK's lane)
the answer carries the gateway's receipt too, its entry the row of that call.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import colibri, query
from tests.interop.test_receipts import entry_of, logged_row
from tests.switchboard.audit_helpers import Raw, answer_digest
from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_http_face import create_token, http_client

RECEIPT = "io.colibri/receipt"
DOWNSTREAM_RECEIPT = "io.colibri/downstream-receipt"


def _origin(db: Path) -> str:
    [meta] = query(db, "SELECT database_id FROM log_meta")
    return f"colibri/{meta['database_id']}"


def _judged(db: Path, receipt: dict[str, Any], tool: str, outcome: str) -> Any:
    """The receipt names the entry of the row of `tool`; that row."""
    assert receipt["origin"] == _origin(db)
    row = logged_row(db, receipt["index"])
    assert (row["tool"], row["outcome"]) == (tool, outcome)
    assert receipt["leaf"] == entry_of(row)
    return row


def test_over_stdio_the_gateway_s_receipt_and_the_colibri_s_beside_it(tmp_path: Path) -> None:
    servers = Downstreams(tmp_path)
    config = write_config(tmp_path, {"board": servers.colibri()}, health=FAST, audit={"db": "gateway.db"})
    raw = Raw(config)
    try:
        raw.wait_for("board", "HEALTHY", timeout=60)
        made = raw.call("board.task_create", {"title": "through the gateway"})
        unknown = raw.call("nowhere.work", {})
    finally:
        raw.close()
    gateway, board = tmp_path / "gateway.db", tmp_path / "colibri" / "colibri.db"

    assert made.get("isError") is not True and unknown["isError"] is True
    row = _judged(gateway, made["_meta"][RECEIPT], "board.task_create", "ok")
    assert row["result_hash"] == answer_digest(made)
    refused = _judged(gateway, unknown["_meta"][RECEIPT], "nowhere.work", "denied")
    assert refused["result_hash"] == answer_digest(unknown)
    _judged(board, made["_meta"][DOWNSTREAM_RECEIPT], "task_create", "ok")
    assert DOWNSTREAM_RECEIPT not in unknown["_meta"]
    entries = colibri("log", "entries", "--db", str(gateway), env=switchboard_env()).stdout.split()
    assert entries[made["_meta"][RECEIPT]["index"]] == made["_meta"][RECEIPT]["leaf"]


@pytest.mark.anyio
async def test_over_http_the_answer_carries_the_gateway_s_receipt(tmp_path: Path) -> None:
    servers = Downstreams(tmp_path)
    tokens_file = tmp_path / "tokens.jsonl"
    ana = create_token("ana", tokens_file).stdout.strip()
    config = write_config(
        tmp_path,
        {"echo": servers.fault("echo")},
        health=FAST,
        auth={"tokens_file": str(tokens_file)},
        audit={"db": "gateway.db"},
    )
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, board)
        async with http_client(f"http://127.0.0.1:{port}/mcp", ana) as client:
            await wait_for_state(client, "echo", "HEALTHY", timeout=60)
            answered = await client.call_tool("echo.work", {"value": 1})
    finally:
        assert stop(board) == 0
    assert answered.is_error is not True and answered.meta is not None
    row = _judged(tmp_path / "gateway.db", answered.meta[RECEIPT], "echo.work", "ok")
    assert row["principal"] == "ana"
