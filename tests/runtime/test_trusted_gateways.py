"""A Colibri that trusts a gateway's key (COLIBRI_TRUSTED_GATEWAYS, SPEC §20) takes the principal its
signed on-behalf-of statement names: over stdio and over HTTP, a real `colibri serve` records a call
vouched for ana as ana's (actions, task history, thought records), `via` the gateway; any other
statement (untrusted, expired, replayed, unsigned, garbage) is ignored with a log line and the call
stays the gateway's own. A bad trusted-keys file stops the start, naming its line."""

from __future__ import annotations

import base64
import json
import sys
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from colibri.domains.access.on_behalf import LIFETIME_S, ON_BEHALF_OF, TYP, StatementKey
from colibri.domains.log.keys import write_key_file
from colibri.domains.log.note import Signer
from tests.helpers import clean_env, colibri, envelope, ok_data, query
from tests.http.helpers import http_client, make_token, running
from tests.ui.browser import ui_server

pytestmark = pytest.mark.anyio

GATEWAY = Signer.generate("gateway")
STRANGER = Signer.generate("stranger")
# Writes the server's stderr to a file, so the test can read its log lines.
_SERVE_LOGGING_TO = (
    "import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND); os.dup2(fd, 2); "
    "from colibri.cli import main; raise SystemExit(main(['serve']))"
)


def _trusting(tmp_path: Path, **env: str) -> dict[str, str]:
    trusted = tmp_path / "trusted-gateways.txt"
    trusted.write_text(f"# our gateway\n{GATEWAY.verifier().key()}\n")
    return clean_env(tmp_path, COLIBRI_TRUSTED_GATEWAYS=str(trusted), **env)


def _on_behalf(principal: str, signer: Signer = GATEWAY, *, now: float | None = None) -> dict[str, Any]:
    return {ON_BEHALF_OF: StatementKey(signer).sign(principal, None, str(uuid.uuid4()), now=now)}


def _b64(part: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()


def _unsigned(principal: str) -> dict[str, Any]:
    now = int(time.time())
    header = {"alg": "none", "kid": f"gateway+{GATEWAY.hash:08x}", "typ": TYP}
    return {
        ON_BEHALF_OF: f"{_b64(header)}.{_b64({'sub': principal, 'jti': 'x', 'iat': now, 'exp': now + 60})}."
    }


async def _create(client: Client, title: str, meta: dict[str, Any] | None) -> Any:
    return ok_data(envelope(await client.call_tool("task_create", {"title": title}, meta=meta)))


@asynccontextmanager
async def _stdio(env: dict[str, str], log: Path) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=sys.executable, args=["-c", _SERVE_LOGGING_TO, str(log)], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
        await client.list_tools()
        yield client


def _rows(db: Path) -> dict[str, tuple[Any, ...]]:
    """Each task's title: its task_create row's principal, token_id and via, and its history's principal."""
    rows = query(db, "SELECT arguments, principal, token_id, via FROM actions WHERE tool = 'task_create'")
    history = {row["task_id"]: row["principal"] for row in query(db, "SELECT * FROM task_history")}
    found = {}
    for task in query(db, "SELECT id, title FROM tasks"):
        [row] = [row for row in rows if json.loads(row["arguments"])["title"] == task["title"]]
        found[task["title"]] = (row["principal"], row["token_id"], row["via"], history[task["id"]])
    assert len(rows) == len(found)
    return found


async def test_over_stdio_a_trusted_statement_names_the_principal_and_others_are_ignored(
    tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    replayed = _on_behalf("ana")
    async with _stdio(_trusting(tmp_path, COLIBRI_PRINCIPAL="gw"), log) as client:
        session = ok_data(envelope(await client.call_tool("audit_session_start", {}, meta=_on_behalf("ana"))))
        thought = {"session_id": session["session_id"], "kind": "plan", "content": "x"}
        ok_data(envelope(await client.call_tool("thought_record", thought, meta=_on_behalf("ana"))))
        await _create(client, "vouched", replayed)
        await _create(client, "replayed", replayed)
        await _create(client, "untrusted", _on_behalf("ana", STRANGER))
        await _create(client, "expired", _on_behalf("ana", now=time.time() - LIFETIME_S - 30))
        await _create(client, "unsigned", _unsigned("ana"))
        await _create(client, "garbage", {ON_BEHALF_OF: "not.a.statement"})
        await _create(client, "garbage again", {ON_BEHALF_OF: 42})  # logged within the minute: quiet
        await _create(client, "plain", None)

    db = tmp_path / "colibri.db"
    jti = json.loads(base64.urlsafe_b64decode(replayed[ON_BEHALF_OF].split(".")[1] + "==="))["jti"]
    own = ("local:gw", None, None, "local:gw")
    assert _rows(db) == {
        "vouched": ("ana", jti, "gateway", "ana"),
        "replayed": own,
        "untrusted": own,
        "expired": own,
        "unsigned": own,
        "garbage": own,
        "garbage again": own,
        "plain": own,
    }
    thoughts = {row["principal"] for row in query(db, "SELECT principal FROM thought_records")}
    assert thoughts == {"ana"}
    lines = [line for line in log.read_text().splitlines() if "on-behalf-of" in line]
    reasons = [line.split("statement (", 1)[1].split(":", 1)[0] for line in lines]
    assert reasons == ["replayed", "untrusted", "expired", "unsigned", "malformed"], lines
    assert all("recorded as local:gw's own" in line for line in lines), lines
    assert replayed[ON_BEHALF_OF] not in log.read_text()


async def test_over_http_the_gateway_s_token_is_the_via_and_its_scope_still_holds(tmp_path: Path) -> None:
    env = _trusting(tmp_path)
    gateway, reader = make_token(env, "gw"), make_token(env, "gw-read", "read")
    with running(env, tmp_path) as server:
        async with http_client(server.url, gateway) as client:
            await _create(client, "vouched", _on_behalf("ana@example.com"))
            await _create(client, "untrusted", _on_behalf("ana@example.com", STRANGER))
        async with http_client(server.url, reader) as client:
            refused = envelope(
                await client.call_tool("task_create", {"title": "read-only"}, meta=_on_behalf("ana"))
            )
            assert refused["ok"] is False, refused
    rows = query(
        tmp_path / "colibri.db",
        "SELECT principal, via, outcome FROM actions WHERE tool = 'task_create' ORDER BY sequence_no",
    )
    assert [tuple(row) for row in rows] == [
        ("ana@example.com", "gw", "ok"),
        ("gw", None, "ok"),
        ("ana", "gw-read", "denied"),  # vouched for, and still only what the gateway's token may do
    ]
    log = server.log.read_text()
    assert "ignored an on-behalf-of statement (untrusted:" in log and "recorded as gw's own" in log


async def test_a_statement_to_a_colibri_that_trusts_no_gateway_is_ignored(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    async with _stdio(clean_env(tmp_path), log) as client:
        await _create(client, "vouched?", _on_behalf("ana"))
    assert _rows(tmp_path / "colibri.db") == {"vouched?": ("local", None, None, "local")}
    assert "this Colibri trusts no gateway (set COLIBRI_TRUSTED_GATEWAYS" in log.read_text()


def test_the_call_page_and_log_rows_show_the_gateway(tmp_path: Path) -> None:
    async def vouched() -> None:
        async with _stdio(_trusting(tmp_path), tmp_path / "serve.log") as client:
            await _create(client, "vouched", _on_behalf("ana"))

    anyio.run(vouched)
    db = tmp_path / "colibri.db"
    [number] = [row["sequence_no"] for row in query(db, "SELECT * FROM actions WHERE tool = 'task_create'")]
    with (
        ui_server(clean_env(tmp_path), tmp_path, "--no-auth") as base,
        urllib.request.urlopen(f"{base}/audit/{number}", timeout=30) as response,
    ):
        page = response.read().decode()
    assert '<dd id="call-via"><code>gateway</code>' in page, page
    printed = colibri("log", "entries", "--db", str(db), "--rows", env=clean_env(tmp_path))
    assert printed.returncode == 0, printed.stderr
    [line] = [line for line in printed.stdout.splitlines() if "\ttask_create\t" in line]
    assert line.split("\t")[3:6] == ["ana", "task_create", "ok"] and line.endswith("\tvia=gateway"), line


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("not-a-key\n", "line 1"),
        (f"{GATEWAY.verifier().key()}\n\n{GATEWAY.key()}\n", "line 3"),
        ("# only a comment\n", "holds no verifier key"),
    ],
    ids=["not-a-key", "a-signer-key", "no-key"],
)
def test_a_bad_trusted_keys_file_stops_the_start_naming_its_line(
    tmp_path: Path, text: str, named: str
) -> None:
    trusted = tmp_path / "trusted.txt"
    trusted.write_text(text)
    done = colibri("serve", env=clean_env(tmp_path, COLIBRI_TRUSTED_GATEWAYS=str(trusted)))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"colibri: COLIBRI_TRUSTED_GATEWAYS: {trusted}") and named in lines[0], lines
    assert GATEWAY.key() not in done.stderr
    assert not (tmp_path / "colibri.db").exists()


def test_a_missing_trusted_keys_file_stops_the_start(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.txt"
    done = colibri("serve", env=clean_env(tmp_path, COLIBRI_TRUSTED_GATEWAYS=str(missing)))
    assert done.returncode == 2 and f"cannot read {missing}" in done.stderr, done.stderr


def _key_file(tmp_path: Path) -> Path:
    path = tmp_path / "gateway.key"
    write_key_file(path, GATEWAY)
    return path


def test_the_file_takes_keys_exactly_as_colibri_key_show_prints_them(tmp_path: Path) -> None:
    shown = colibri("key", "show", str(_key_file(tmp_path)), env=clean_env(tmp_path))
    assert shown.returncode == 0, shown.stderr
    trusted = tmp_path / "trusted.txt"
    trusted.write_text(shown.stdout)
    done = colibri("tools", env=clean_env(tmp_path, COLIBRI_TRUSTED_GATEWAYS=str(trusted)))
    assert done.returncode == 0, done.stderr
