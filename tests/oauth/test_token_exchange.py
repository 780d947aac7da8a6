"""`"identity": "exchange"` (SPEC §20, "Identity through the gateway"; issue 41): a switchboard
--http in front of `colibri serve --http --oauth-issuer`, both trusting the real identity provider.
ana signs in for the switchboard; her task_create reaches the downstream with a token the provider
made from hers by RFC 8693 exchange (the downstream takes only tokens whose aud is its own /mcp URL,
and refuses hers: its row is the proof), whose sub is ana: the downstream's row and task history
name her with the issuer and a token id that is not her token's. Her own token never reaches the
downstream, and a second call uses the exchanged token kept from the first. A tokens-file caller
has nothing to exchange and is refused before anything is sent; an exchange the provider refuses
names the provider's error, never the token, and sends nothing."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
import pytest
from mcp_types import CallToolResult

from colibri.serving.oauth import ClientCredentials, OAuthSettings
from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import ServerSpec, parse
from colibri.switchboard.downstream.exchange import SUBJECT, Exchanged, ExchangeFailed
from colibri.switchboard.faces import TokensFile
from tests.helpers.idp import IdentityProvider, identity_provider
from tests.http.helpers import HttpServer, get, http_client, http_env, running
from tests.switchboard.helpers import (
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)

pytestmark = pytest.mark.anyio

SECRET_VAR = "GATEWAY_CLIENT_SECRET"


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    with identity_provider() as provider:
        yield provider


@dataclass(frozen=True)
class Gateway:
    url: str
    db: Path
    log: Path
    tokens: TokensFile


def oauth(idp: IdentityProvider) -> dict[str, str]:
    return {"issuer": idp.issuer, "client_id": idp.client_id, "client_secret": f"${{{SECRET_VAR}}}"}


@contextmanager
def gateway(idp: IdentityProvider, tmp_path: Path, downstream: str) -> Iterator[Gateway]:
    """A switchboard --http (audited, tokens file and the provider) whose `team` is `downstream`."""
    tokens = tmp_path / "tokens.jsonl"
    config = write_config(
        tmp_path,
        {"team": {"url": downstream, "identity": "exchange"}},
        auth={"tokens_file": str(tokens), "oauth": oauth(idp)},
        audit={"db": "audit/gateway.db"},
    )
    port, log = free_port(), tmp_path / "gateway.log"
    env = {**switchboard_env(), SECRET_VAR: idp.client_secret, "COLIBRI_LOG_LEVEL": "info"}
    with log.open("wb") as sink:
        board = subprocess.Popen(
            switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=env, stderr=sink
        )
    try:
        wait_for_port(port, board)
        yield Gateway(
            f"http://127.0.0.1:{port}/mcp", tmp_path / "audit" / "gateway.db", log, TokensFile(tokens)
        )
    finally:
        stop(board)


def rows(db: Path | str, tool: str) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        query = "SELECT * FROM actions WHERE tool = ? AND outcome != 'running' ORDER BY sequence_no"
        return [dict(row) for row in conn.execute(query, (tool,))]


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


@contextmanager
def downstream_and_gateway(idp: IdentityProvider, tmp_path: Path) -> Iterator[tuple[HttpServer, Gateway]]:
    """`colibri serve --http` trusting the provider (audience: its own /mcp URL), and the gateway."""
    with (
        running(http_env(tmp_path), tmp_path, "--oauth-issuer", idp.issuer) as served,
        gateway(idp, tmp_path, served.url) as gw,
    ):
        yield served, gw


async def test_ana_reaches_the_downstream_as_herself_with_an_exchanged_token_and_never_her_own(
    idp: IdentityProvider, tmp_path: Path
) -> None:
    with downstream_and_gateway(idp, tmp_path) as (served, gw):
        token = idp.authorization_code_token("ana@example.com", gw.url)["access_token"]
        jti = jwt.decode(token, options={"verify_signature": False})["jti"]
        # Her own token is not the downstream's (its aud is the gateway): refused there.
        assert get(served.url, {"Authorization": f"Bearer {token}"})[0] == 401
        async with http_client(gw.url, token) as client:
            first = await client.call_tool("team.task_create", {"title": "through the gateway"})
            second = await client.call_tool("team.task_create", {"title": "and once more"})
        assert not first.is_error, text_of(first)
        assert not second.is_error, text_of(second)

        down = rows(served.env["COLIBRI_DB_PATH"], "task_create")
        assert [(row["principal"], row["issuer"], row["outcome"]) for row in down] == [
            ("ana@example.com", idp.issuer, "ok")
        ] * 2
        exchanged = down[0]["token_id"]
        assert exchanged and exchanged != jti  # the provider's new token, not ana's own
        assert down[1]["token_id"] == exchanged  # the second call used the token kept from the first
        with sqlite3.connect(served.env["COLIBRI_DB_PATH"]) as db:
            assert db.execute("SELECT DISTINCT principal FROM task_history").fetchall() == [
                ("ana@example.com",)
            ]
        up = rows(gw.db, "team.task_create")
        assert [(row["principal"], row["issuer"], row["token_id"]) for row in up] == [
            ("ana@example.com", idp.issuer, jti)
        ] * 2

        said = gw.log.read_text()
        assert said.count("exchanged the token of ana@example.com") == 1, said
        assert token not in served.log.read_text()
        assert token not in said


async def test_a_tokens_file_caller_is_refused_before_anything_is_sent(
    idp: IdentityProvider, tmp_path: Path
) -> None:
    with downstream_and_gateway(idp, tmp_path) as (served, gw):
        token = gw.tokens.create("ops")
        async with http_client(gw.url, token) as client:
            refused = await client.call_tool("team.task_create", {"title": "as a token of the file"})
            assert refused.is_error
            envelope = json.loads(text_of(refused))["error"]
            # The switchboard's own tool still answers the same token.
            assert not (await client.call_tool("switchboard_status", {})).is_error
        assert envelope["code"] == "TOOL_NOT_ADMITTED", envelope
        assert envelope["details"]["reason"] == "identity:exchange"
        assert "signed in at the identity provider" in envelope["message"] and "'ops'" in envelope["message"]
        [row] = rows(gw.db, "team.task_create")
        assert (row["principal"], row["outcome"], row["reason"]) == ("ops", "denied", "identity:exchange")
        assert rows(served.env["COLIBRI_DB_PATH"], "task_create") == []


async def test_an_exchange_the_provider_refuses_names_its_error_and_sends_nothing(
    idp: IdentityProvider,
) -> None:
    settings = OAuthSettings(idp.issuer, client=ClientCredentials(idp.client_id, idp.client_secret))
    spec = ServerSpec("team", url="http://127.0.0.1:9/mcp", exchange=settings)
    released: list[object] = []

    class Machine:
        def release(self, ticket: object) -> None:
            released.append(ticket)

    async def send(own: object, ticket: object) -> None:
        raise AssertionError("nothing may be sent")

    pool = Exchanged(spec, lambda own: pytest.fail("no connection may be opened"))
    real = idp.authorization_code_token("ana@example.com", "http://127.0.0.1:9/gateway")["access_token"]
    head, body, _ = real.split(".")
    forged = f"{head}.{body}.{'A' * 342}"  # ana's claims, a signature the provider never made
    handed = SUBJECT.set(forged)
    try:
        with pytest.raises(ExchangeFailed) as refused:
            await pool.call("ana@example.com", Machine(), "ticket", send)  # type: ignore[arg-type]
    finally:
        SUBJECT.reset(handed)
    said = str(refused.value)
    assert "invalid_grant" in said and idp.issuer in said, said
    assert forged not in said and body not in said
    assert not refused.value.sent
    # No token at all (a tokens-file caller that got this far): refused the same way, unsent.
    with pytest.raises(ExchangeFailed, match="came with no such token"):
        await pool.call("ops", Machine(), "ticket", send)  # type: ignore[arg-type]
    assert released == ["ticket", "ticket"]


@pytest.mark.parametrize(
    ("entry", "auth", "expected"),
    [
        ({"command": "colibri", "identity": "exchange"}, True, ("mcpServers.team.identity", '"url" servers')),
        (
            {"url": "http://127.0.0.1:9/mcp", "identity": "exchange"},
            False,
            ("mcpServers.team.identity", "client_id"),
        ),
        (
            {"url": "http://127.0.0.1:9/mcp", "identity": "pass"},
            True,
            ("mcpServers.team.identity", "'exchange'"),
        ),
        (
            {"url": "http://127.0.0.1:9/mcp", "identity": "exchange", "headers": {"authorization": "x"}},
            True,
            ("mcpServers.team.headers.authorization", "exchanged token"),
        ),
    ],
)
def test_a_misplaced_identity_key_is_refused_with_its_json_path(
    idp: IdentityProvider, tmp_path: Path, entry: dict[str, Any], auth: bool, expected: tuple[str, str]
) -> None:
    path, said = expected
    sections = {"auth": {"oauth": oauth(idp)}} if auth else {}
    config = write_config(tmp_path, {"team": entry}, **sections)
    with pytest.raises(ConfigError) as refused:  # the same check at load and at every reload
        parse(config.read_text(), {SECRET_VAR: "s"})
    assert path in str(refused.value) and said in str(refused.value)
    done = subprocess.run(
        switchboard_command(config, "--http", "127.0.0.1:0"),
        env={**switchboard_env(), SECRET_VAR: "s"},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done
    assert path in done.stderr.decode() and said in done.stderr.decode(), done.stderr
