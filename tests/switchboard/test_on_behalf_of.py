"""The caller through the gateway (SPEC §20): a real switchboard in front of a real `colibri serve`
that trusts its key tells it who each call's caller is, so a task ana creates through the gateway
is ana's on the downstream board (its actions row, its task history), `via` the gateway. Over stdio
(the lean lane) and over HTTP (the SDK's lane, with the gateway's own token at the Colibri); signed
with `identity_key`, else the audit store's key, else not at all; never told to a server that is
not a Colibri; ignored by a Colibri that does not trust the key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from colibri.domains.access.on_behalf import ON_BEHALF_OF
from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import load
from tests.helpers import clean_env, colibri, envelope, ok_data, query
from tests.http.helpers import make_token, running
from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    free_port,
    stop,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_http_face import create_token, http_client

pytestmark = pytest.mark.anyio

META_SERVER = Path(__file__).with_name("meta_server.py")


def _key(tmp_path: Path, name: str) -> tuple[Path, str]:
    """A signer key file made by `colibri key generate`, and its verifier key line."""
    path = tmp_path / f"{name}.key"
    made = colibri("key", "generate", "--name", name, "--out", str(path), env=clean_env(tmp_path))
    assert made.returncode == 0, made.stderr
    return path, made.stdout


def _trusting(tmp_path: Path, line: str) -> Path:
    trusted = tmp_path / "trusted-gateways.txt"
    trusted.write_text(line)
    return trusted


def _meta_server(tmp_path: Path, name: str) -> dict[str, Any]:
    log = tmp_path / f"meta-{name}.jsonl"
    return {
        "command": sys.executable,
        "args": [str(META_SERVER)],
        "env": {"META_NAME": name, "META_LOG": str(log)},
    }


def _told(tmp_path: Path, name: str) -> list[list[str]]:
    return [json.loads(line) for line in (tmp_path / f"meta-{name}.jsonl").read_text().splitlines()]


def _created(db: Path) -> list[tuple[Any, ...]]:
    """Each task_create row: its title, principal, via and token_id, and its task history's principal."""
    history = {row["task_id"]: row["principal"] for row in query(db, "SELECT * FROM task_history")}
    titles = {row["title"]: row["id"] for row in query(db, "SELECT id, title FROM tasks")}
    rows = query(db, "SELECT * FROM actions WHERE tool = 'task_create' ORDER BY sequence_no")
    found = []
    for row in rows:
        title = json.loads(row["arguments"])["title"]
        found.append((title, row["principal"], row["via"], row["token_id"], history[titles[title]]))
    return found


async def test_over_stdio_a_task_made_through_the_gateway_is_its_caller_s_and_only_a_colibri_is_told(
    tmp_path: Path,
) -> None:
    key, line = _key(tmp_path, "gateway")
    servers = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {
            "board": servers.colibri(COLIBRI_TRUSTED_GATEWAYS=str(_trusting(tmp_path, line))),
            "third": _meta_server(tmp_path, "third"),
            "lookalike": _meta_server(tmp_path, "colibri"),
        },
        health=FAST,
        identity_key=str(key),
    )
    async with switchboard(config) as client:
        for name in ("board", "third", "lookalike"):
            await wait_for_state(client, name, "HEALTHY", timeout=60)
        ok_data(envelope(await client.call_tool("board.task_create", {"title": "through the gateway"})))
        ok_data(envelope(await client.call_tool("board.task_create", {"title": "and again"})))
        assert not (await client.call_tool("third.echo", {})).is_error
        assert not (await client.call_tool("lookalike.echo", {})).is_error

    made = _created(tmp_path / "colibri" / "colibri.db")
    # The switchboard's stdio caller is its `local`; each statement has a jti of its own.
    assert [row[:3] for row in made] == [
        ("through the gateway", "local", "gateway"),
        ("and again", "local", "gateway"),
    ]
    assert made[0][3] != made[1][3] and all(row[4] == "local" for row in made)
    assert all(ON_BEHALF_OF not in keys for keys in _told(tmp_path, "third"))
    assert [ON_BEHALF_OF in keys for keys in _told(tmp_path, "colibri")] == [True]


async def test_without_a_key_nothing_is_told(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"lookalike": _meta_server(tmp_path, "colibri")}, health=FAST)
    async with switchboard(config) as client:
        await wait_for_state(client, "lookalike", "HEALTHY", timeout=60)
        assert not (await client.call_tool("lookalike.echo", {})).is_error
    assert [ON_BEHALF_OF in keys for keys in _told(tmp_path, "colibri")] == [False]


async def test_a_colibri_that_does_not_trust_the_key_records_the_gateway_s_own_principal(
    tmp_path: Path,
) -> None:
    _, line = _key(tmp_path, "gateway")
    stranger, _ = _key(tmp_path, "stranger")
    servers = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {
            "board": servers.colibri(
                COLIBRI_TRUSTED_GATEWAYS=str(_trusting(tmp_path, line)), COLIBRI_PRINCIPAL="gw"
            )
        },
        health=FAST,
        identity_key=str(stranger),
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "board", "HEALTHY", timeout=60)
        ok_data(envelope(await client.call_tool("board.task_create", {"title": "untrusted"})))
    assert _created(tmp_path / "colibri" / "colibri.db") == [
        ("untrusted", "local:gw", None, None, "local:gw")
    ]


async def test_over_http_ana_and_bob_are_themselves_on_the_downstream_board_via_the_gateway_s_token(
    tmp_path: Path,
) -> None:
    # No identity_key: the audit store's signing key signs, so the Colibri trusts that key.
    audit_key, line = _key(tmp_path, "gateway")
    downstream_home = tmp_path / "downstream"
    downstream_home.mkdir()
    env = clean_env(downstream_home, COLIBRI_TRUSTED_GATEWAYS=str(_trusting(tmp_path, line)))
    gateway_token = make_token(env, "gw")
    tokens_file = tmp_path / "tokens.jsonl"
    ana, bob = (create_token(name, tokens_file).stdout.strip() for name in ("ana", "bob"))
    with running(env, downstream_home) as colibri_http:
        config = write_config(
            tmp_path,
            {"board": {"url": colibri_http.url, "headers": {"Authorization": f"Bearer {gateway_token}"}}},
            health=FAST,
            auth={"tokens_file": str(tokens_file)},
            audit={"db": "audit/gateway.db", "signing_key": str(audit_key)},
        )
        port = free_port()
        board = subprocess.Popen(
            switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
        )
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            wait_for_port(port, board)
            async with http_client(url, ana) as as_ana:
                await wait_for_state(as_ana, "board", "HEALTHY", timeout=60)
                ok_data(envelope(await as_ana.call_tool("board.task_create", {"title": "ana's"})))
            async with http_client(url, bob) as as_bob:
                ok_data(envelope(await as_bob.call_tool("board.task_create", {"title": "bob's"})))
        finally:
            assert stop(board) == 0

    made = _created(downstream_home / "colibri.db")
    assert [(row[0], row[1], row[2], row[4]) for row in made] == [
        ("ana's", "ana", "gw", "ana"),
        ("bob's", "bob", "gw", "bob"),
    ]
    # The statement's jti is the gateway's correlation id: each row is tied to the gateway's own.
    gateway_rows = query(
        tmp_path / "audit" / "gateway.db",
        "SELECT correlation_id, principal FROM actions WHERE tool = 'board.task_create' ORDER BY sequence_no",
    )
    assert [(row["correlation_id"], row["principal"]) for row in gateway_rows] == [
        (made[0][3], "ana"),
        (made[1][3], "bob"),
    ]


def test_an_identity_key_that_is_not_a_signer_key_stops_the_start(tmp_path: Path) -> None:
    _, line = _key(tmp_path, "gateway")
    not_a_key = tmp_path / "verifier.txt"
    not_a_key.write_text(line)  # the verifier key, not the signer key
    config = write_config(tmp_path, {"third": _meta_server(tmp_path, "third")}, identity_key="verifier.txt")
    done = subprocess.run(
        switchboard_command(config),
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "identity_key" in done.stderr and "colibri key generate" in done.stderr, done.stderr


async def test_a_reload_refuses_a_bad_identity_key_and_takes_a_good_one(tmp_path: Path) -> None:
    from colibri.switchboard.program.reload import reload_from
    from colibri.switchboard.routing import Switchboard

    first, _ = _key(tmp_path, "first")
    second, _ = _key(tmp_path, "second")
    servers = {"third": _meta_server(tmp_path, "third")}
    config = write_config(tmp_path, servers, identity_key=first.name)
    board = Switchboard(load(config))
    assert board.vouching.key is not None and board.vouching.key.name == "first"

    write_config(tmp_path, servers, identity_key="missing.key")
    with pytest.raises(ConfigError) as refused:
        load(config)
    assert refused.value.path == "identity_key" and "missing.key" in str(refused.value)
    assert not await reload_from(board, str(config))
    assert board.vouching.key.name == "first"

    write_config(tmp_path, servers, identity_key=second.name)
    assert await reload_from(board, str(config))
    assert board.vouching.key.name == "second"
