"""Which token made a call is shown where its principal is (SPEC §20): `colibri ui`'s call page
and `colibri log entries --rows`, over the store of a real `colibri serve --http` that served one
token's call and one stdio call."""

from __future__ import annotations

import hashlib
import re
import urllib.request
from pathlib import Path

import anyio

from tests.helpers import call, colibri, connect, ok_data, query
from tests.http.helpers import http_client, http_env, make_token, running
from tests.ui.browser import ui_server


async def _calls(env: dict[str, str], tmp_path: Path, token: str) -> None:
    with running(env, tmp_path) as server:
        async with http_client(server.url, token) as client:
            ok_data(await call(client, "task_create", {"title": "by a token"}))
    async with connect(env) as local:
        ok_data(await call(local, "task_list", {}))


def _page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode())


def test_the_call_page_and_log_rows_show_the_token_of_a_call(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    token = make_token(env, "ana")
    digest = hashlib.sha256(token.encode()).hexdigest()
    anyio.run(_calls, env, tmp_path, token)
    numbers = {
        row["tool"]: row["sequence_no"] for row in query(tmp_path / "colibri.db", "SELECT * FROM actions")
    }
    with ui_server(env, tmp_path, "--no-auth") as base:
        by_token = _page(f"{base}/audit/{numbers['task_create']}")
        local = _page(f"{base}/audit/{numbers['task_list']}")
    shown = re.search(r'<dd id="call-token">(.*?)</dd>', by_token, re.S)
    assert shown is not None and digest in shown.group(1), by_token
    assert 'id="call-token"' not in local and 'id="call-issuer"' not in by_token + local

    printed = colibri("log", "entries", "--db", str(tmp_path / "colibri.db"), "--rows", env=env)
    assert printed.returncode == 0, printed.stderr
    rows = {line.split("\t")[4]: line.split("\t")[3:] for line in printed.stdout.splitlines()}
    assert rows["task_create"] == ["ana", "task_create", "ok", f"token_id={digest}"]
    assert rows["task_list"] == ["local", "task_list", "ok"]
