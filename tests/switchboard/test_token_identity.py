"""Which token made each call through `colibri switchboard --http` (SPEC §20): every row of its
audit store carries the token's SHA-256 (the digest the tokens file holds) in `token_id`, and
`issuer` NULL (Colibri issued the token); a refused call's row as much as an answered one's."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from tests.helpers import query
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

pytestmark = pytest.mark.anyio


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def test_each_audit_row_names_the_token_that_made_the_call(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens.jsonl"
    ana, ben = (create_token(name, tokens_file).stdout.strip() for name in ("ana", "ben"))
    config = write_config(
        tmp_path,
        {"open": Downstreams(tmp_path).fault("open")},
        health=FAST,
        auth={"tokens_file": str(tokens_file), "policies": {"ben": {"deny": ["open.*"]}}},
        audit={"db": "audit/gateway.db"},
    )
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, board)
        async with http_client(url, ana) as as_ana:
            await wait_for_state(as_ana, "open", "HEALTHY", timeout=60)
            assert not (await as_ana.call_tool("open.work", {})).is_error
        async with http_client(url, ben) as as_ben:
            assert (await as_ben.call_tool("open.work", {})).is_error  # its policy refuses it
    finally:
        assert stop(board) == 0

    rows = query(
        tmp_path / "audit" / "gateway.db",
        "SELECT tool, outcome, principal, issuer, token_id FROM actions WHERE tool = 'open.work'"
        " ORDER BY sequence_no",
    )
    assert [tuple(row) for row in rows] == [
        ("open.work", "ok", "ana", None, _sha256(ana)),
        ("open.work", "denied", "ben", None, _sha256(ben)),
    ]
