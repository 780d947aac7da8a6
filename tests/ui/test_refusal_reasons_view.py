"""Every refusal says why, and names cannot forge what a person reads (SPEC §21), shown by
`colibri ui` and `colibri log entries --rows` over a real switchboard's audit store.

A switchboard (stdio, pins on) records a call, a policy's refusal, an unknown tool whose name holds
a right-to-left override and CR/LF, and its own pin events. The audit list shows each refusal's
reason and hides the pin events unless asked (`?events=1`, or the outcome `event`); the call page
shows the reason and its message; `log entries --rows` prints them after each hash, tab-separated,
and every name is escaped in both.
"""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import anyio
import pytest

from tests.helpers import clean_env, colibri
from tests.switchboard.audit_helpers import actions
from tests.switchboard.helpers import FAST, Downstreams, own_answer, switchboard, wait_for_state, write_config
from tests.switchboard.test_http_face import create_token
from tests.ui.browser import ui_server

pytestmark = pytest.mark.slow

FORGED = "evil\u202etxt.exe\r\nfs.work ok"  # reads as another tool, and forges a second line
ESCAPED = "evil\\u202etxt.exe\\r\\nfs.work ok"


async def refused_calls(tmp_path: Path) -> Path:
    downstreams = Downstreams(tmp_path)
    tokens_file = tmp_path / "tokens.jsonl"
    assert create_token("ana", tokens_file).returncode == 0  # the stdio caller is `local` all the same
    config = write_config(
        tmp_path,
        {"fs": downstreams.fault("fs")},
        health=FAST,
        auth={"tokens_file": str(tokens_file), "policies": {"local": {"deny": ["fs.info"]}}},
        audit={"db": "gateway.db"},
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "fs", "HEALTHY")
        assert not (await client.call_tool("fs.work", {"value": 1})).is_error
        assert own_answer(await client.call_tool("fs.info", {}))["error"]["code"] == "TOOL_NOT_ADMITTED"
        assert own_answer(await client.call_tool(FORGED, {}))["error"]["code"] == "UNKNOWN_TOOL"
    return tmp_path / "gateway.db"


def _page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode())


def cells(html: str, column: int) -> list[str]:
    """The text of one column of the audit list's rows."""
    rows = re.findall(r"<tr data-call=.*?</tr>", html, re.S)
    return [re.sub(r"<[^>]+>", "", re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)[column]) for row in rows]


def test_reasons_are_shown_pin_events_hidden_and_names_escaped(tmp_path: Path) -> None:
    store = anyio.run(refused_calls, tmp_path)
    rows = {row["tool"]: row for row in actions(store)}
    assert rows[FORGED]["reason"] == "unknown_tool" and rows["fs.info"]["reason"] == "policy:local"
    env = clean_env(tmp_path, COLIBRI_DB_PATH=str(store))
    with ui_server(env, tmp_path, "--no-auth") as base:
        listed = _page(f"{base}/audit")
        with_events = _page(f"{base}/audit?events=1")
        only_events = _page(f"{base}/audit?outcome=event")
        refused_page = _page(f"{base}/audit/{rows['fs.info']['sequence_no']}")
        forged_page = _page(f"{base}/audit/{rows[FORGED]['sequence_no']}")

    shown = [
        row for row in zip(cells(listed, 3), cells(listed, 5), strict=True) if row[0] != "switchboard_status"
    ]
    # newest first, each refusal with its reason, and no pin events
    assert shown == [(ESCAPED, "unknown_tool"), ("fs.info", "policy:local"), ("fs.work", "")]
    assert "\u202e" not in listed and "evil" in listed
    pinned = {"switchboard:pins/pin"}
    assert pinned <= set(cells(with_events, 3)) and set(cells(only_events, 3)) == pinned
    assert set(cells(only_events, 4)) == {"event"}

    reason = re.search(r'<dd id="call-reason">(.*?)</dd>', refused_page, re.S)
    assert reason is not None and "policy:local" in reason.group(1)
    assert "fs.info is not admitted" in reason.group(1) and "auth.policies.local" in reason.group(1)
    assert "\u202e" not in forged_page and "\r\n" not in forged_page.split("<pre")[0].split("<h1>")[1]
    assert ESCAPED in forged_page

    printed = colibri("log", "entries", "--db", str(store), "--rows", env=env)
    plain = colibri("log", "entries", "--db", str(store), env=env)
    assert printed.returncode == 0 == plain.returncode, printed.stderr + plain.stderr
    lines = printed.stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == plain.stdout.splitlines()  # hashes first, one a line
    refusals = [line.split("\t")[3:] for line in lines if "\tdenied\t" in line]
    assert refusals[0][:3] == ["local", "fs.info", "denied"] and refusals[0][3].startswith("policy:local: ")
    assert refusals[1][:3] == ["local", ESCAPED, "denied"] and refusals[1][3].startswith("unknown_tool: ")
    assert "\u202e" not in printed.stdout
