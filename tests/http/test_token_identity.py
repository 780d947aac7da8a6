"""Which token made each call (SPEC §20): over HTTP every `actions` row of a call carries the
token's SHA-256 (the digest `access_tokens` stores) in `token_id`, and `issuer` NULL (Colibri issued
the token itself); on stdio both stay NULL. Whatever path writes the row: a write opened in its
transaction, a read, an inline system tool, a refusal."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.helpers import call, connect, ok_data, query
from tests.http.helpers import http_client, http_env, make_token, running

pytestmark = pytest.mark.anyio


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def test_each_row_names_the_token_that_made_the_call(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    ana, reader = make_token(env, "ana"), make_token(env, "reader", "read")
    with running(env, tmp_path) as server:
        async with http_client(server.url, ana) as as_ana, http_client(server.url, reader) as as_reader:
            ok_data(await call(as_ana, "task_create", {"title": "tied to a token"}))
            ok_data(await call(as_ana, "task_list", {}))
            ok_data(await call(as_ana, "server_ping", {}))
            refused = await call(as_reader, "task_create", {"title": "read scope"})
            assert refused["ok"] is False
    async with connect(env) as local:
        ok_data(await call(local, "task_list", {}))

    rows = query(
        tmp_path / "colibri.db",
        "SELECT tool, outcome, principal, issuer, token_id FROM actions ORDER BY sequence_no",
    )
    seen = {(row["tool"], row["outcome"], row["principal"], row["issuer"], row["token_id"]) for row in rows}
    assert seen == {
        ("task_create", "ok", "ana", None, _sha256(ana)),
        ("task_list", "ok", "ana", None, _sha256(ana)),
        ("server_ping", "ok", "ana", None, _sha256(ana)),
        ("task_create", "denied", "reader", None, _sha256(reader)),
        ("task_list", "ok", "local", None, None),
    }
    assert len(rows) == len(seen)
