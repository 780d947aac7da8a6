"""The HTTP face's lean lane (faces/post_lane.py, SPEC §25): a POST of one routed tools/call answered
beside the SDK, with the SDK path's answers, audit rows and isolation (SPEC §15, §21).

One real switchboard over HTTP with a tokens file (alice, bob), a policy, a rate limit and an audit
store, in front of two fault servers (one whose tool's definition changes) and a talkative one. The
face's /metrics counts the calls its lane took (`colibri_switchboard_http_lean_calls_total`): the
same request sent with a Content-Length takes the lane, and sent chunked (no length: the lane leaves
it) takes the SDK's path, so each answer and row of one is compared with the other's.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.switchboard.audit_helpers import RECEIPT, calls
from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)
from tests.switchboard.test_http_face import create_token, metrics
from tests.switchboard.test_pins_readable import define

pytestmark = pytest.mark.anyio

HOSTILE = Path(__file__).with_name("hostile_server.py")
LEAN = ("colibri_switchboard_http_lean_calls_total", ())
# What differs between two calls of the same request: the fault server's call number, the time a
# refusal says to wait, and the request's own id.
_VARYING = re.compile(r'(\\?"call\\?": ?)\d+|(retry_after_s\\?": ?)[\d.]+|(on call )\d+|(in )[\d.]+( s)')


class Session:
    """One MCP session of a principal, driven by raw HTTP past its handshake."""

    def __init__(self, http: httpx2.AsyncClient, url: str, token: str) -> None:
        self.http, self.url, self.number = http, url, 0
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }

    async def open(self) -> Session:
        client = {"name": "lane-test", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
        opened = await self.post("initialize", params)
        self.headers |= {
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": "2025-06-18",
        }
        done = await self.http.post(
            self.url, headers=self.headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        assert done.status_code == 202, done.text
        return self

    async def post(self, method: str, params: dict[str, Any], *, chunked: bool = False) -> httpx2.Response:
        self.number += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.number, "method": method, "params": params}).encode()

        async def parts() -> AsyncIterator[bytes]:
            yield body

        content: Any = parts() if chunked else body
        return await self.http.post(self.url, headers=self.headers, content=content)

    async def call(self, name: str, arguments: dict[str, Any], *, chunked: bool = False) -> dict[str, Any]:
        """The JSON-RPC answer, less its id (one JSON body, or the last event of a stream)."""
        answered = await self.post("tools/call", {"name": name, "arguments": arguments}, chunked=chunked)
        assert answered.status_code == 200, answered.text
        if answered.headers["content-type"].startswith("application/json"):
            body: dict[str, Any] = answered.json()
        else:
            body = json.loads(
                [line for line in answered.text.splitlines() if line.startswith("data:")][-1][5:]
            )
        assert body.pop("id") == self.number, body
        return body


def _same(answer: dict[str, Any]) -> str:
    """The answer less what differs between two calls of one request, and less the audit receipt,
    which an answer carries only when its row was committed before it went (SPEC §22)."""
    result = dict(answer.get("result") or {})
    meta = {key: value for key, value in result.pop("_meta", {}).items() if key != RECEIPT}
    shown = answer | ({"result": result | ({"_meta": meta} if meta else {})} if "result" in answer else {})
    return _VARYING.sub(
        lambda m: "".join(g or "" for g in m.groups()[:4:]) + "N", json.dumps(shown, sort_keys=True)
    )


def _lean_calls(url: str, token: str) -> float:
    scraped = httpx2.get(url.replace("/mcp", "/metrics"), headers={"Authorization": f"Bearer {token}"})
    assert scraped.status_code == 200, scraped.text
    return metrics(scraped.text).get(LEAN, 0.0)


def _row(row: dict[str, Any]) -> dict[str, Any]:
    """What two rows of the same request share: all but when, how long, and where in the log."""
    varying = {
        "sequence_no",
        "correlation_id",
        "log_index",
        "started_at",
        "ended_at",
        "duration_ms",
        "result_hash",
        "row_hash",
    }
    return {
        key: _VARYING.sub("N", value) if isinstance(value, str) else value
        for key, value in row.items()
        if key not in varying and not key.endswith("_at")
    }


ASKED: list[tuple[int, str, dict[str, Any]]] = [  # (who, tool, arguments): alice 0, bob 1
    (0, "echo.work", {"value": 1}),  # a result
    (1, "echo.info", {}),  # refused by bob's policy
    (0, "echo.nope", {}),  # a tool the server does not have
    (0, "nowhere.work", {}),  # a server nobody configured (never the lane's)
    (0, "echo.work", {"value": [1, 2]}),
]


async def _both_ways(
    as_alice: Session, as_bob: Session, downstreams: Downstreams, definition: Path
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each request by the lane, then by the SDK's path (chunked): both answers."""
    pairs = []
    for who, name, arguments in ASKED:
        session = (as_alice, as_bob)[who]
        pairs.append((await session.call(name, arguments), await session.call(name, arguments, chunked=True)))
    # A tool's own error and a JSON-RPC error from the downstream, each both ways.
    downstreams.set_mode("echo", "error")
    pairs.append((await as_alice.call("echo.work", {}), await as_alice.call("echo.work", {}, chunked=True)))
    downstreams.set_mode("echo", "fail")
    pairs.append((await as_alice.call("echo.work", {}), await as_alice.call("echo.work", {}, chunked=True)))
    # The rate limit (2 a minute): the third call is refused on either path, the fourth too.
    await as_bob.call("echo.set_mode", {"mode": "fail"})
    await as_bob.call("echo.set_mode", {"mode": "fail"}, chunked=True)
    again = ("echo.set_mode", {"mode": "x"})
    pairs.append((await as_bob.call(*again), await as_bob.call(*again, chunked=True)))
    # A tool whose definition changed is withheld until a person approves it (SPEC §15).
    changed = define(definition, {"description": "now it does something else"})
    with anyio.fail_after(20):
        while changed not in json.dumps(await as_alice.call("switchboard_status", {})):
            await anyio.sleep(0.05)
    pairs.append((await as_alice.call("svc.work", {}), await as_alice.call("svc.work", {}, chunked=True)))
    return pairs


async def _cancelled(session: Session, downstreams: Downstreams) -> tuple[httpx2.Response, int]:
    """A call the downstream never answers, cancelled by the client's notifications/cancelled: the
    call's POST ends with no answer, the cancellation's own POST is accepted (202)."""
    downstreams.set_mode("echo", "timeout")
    before = downstreams.calls("echo")
    ended: list[httpx2.Response] = []

    async def hanging() -> None:
        ended.append(await session.post("tools/call", {"name": "echo.work", "arguments": {}}))

    async with anyio.create_task_group() as calls:
        calls.start_soon(hanging)
        with anyio.fail_after(10):
            while downstreams.calls("echo") == before:  # the downstream has the call
                await anyio.sleep(0.02)
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": session.number},
        }
        accepted = await session.http.post(session.url, headers=session.headers, json=cancel)
    return ended[0], accepted.status_code


def _configured(tmp_path: Path, downstreams: Downstreams) -> tuple[Path, Path, tuple[str, str]]:
    """The config, the file `svc.work`'s definition is read from, and alice's and bob's tokens."""
    tokens_file = tmp_path / "tokens.jsonl"
    alice, bob = (create_token(name, tokens_file).stdout.strip() for name in ("alice", "bob"))
    loud = {"command": sys.executable, "args": [str(HOSTILE)], "env": {"HOSTILE_RECORD": "/dev/null"}}
    svc, definition = downstreams.fault("svc"), tmp_path / "work.json"
    define(definition, {})
    svc["env"]["FAULT_DEFINITION_FILE"] = str(definition)
    config = write_config(
        tmp_path,
        {"echo": downstreams.fault("echo"), "loud": loud, "svc": svc},
        health=FAST,
        auth={"tokens_file": str(tokens_file), "policies": {"bob": {"deny": ["echo.info"]}}},
        rate_limits={"per_tool": {"echo.set_mode": {"calls_per_minute": 2}}},
        audit={"db": "audit/gateway.db"},
    )
    return config, definition, (alice, bob)


async def test_the_lane_answers_and_records_as_the_sdk_path_and_each_session_hears_only_its_own(
    tmp_path: Path,
) -> None:
    downstreams = Downstreams(tmp_path)
    config, definition, (alice, bob) = _configured(tmp_path, downstreams)
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, board)
        async with httpx2.AsyncClient(timeout=30) as http:
            as_alice = await Session(http, url, alice).open()
            as_bob = await Session(http, url, bob).open()
            listed = await as_alice.post("tools/list", {})  # waits for the servers' first verdicts
            assert {"echo.work", "loud.work"} <= {t["name"] for t in listed.json()["result"]["tools"]}
            pairs = await _both_ways(as_alice, as_bob, downstreams, definition)
            taken = _lean_calls(url, alice)

            # Two principals' calls at once: each POST carries its own progress and log, and only those.
            streams: dict[str, httpx2.Response] = {}

            async def talk(session: Session, secret: str) -> None:
                params = {
                    "name": "loud.work",
                    "arguments": {"secret": secret, "hold_s": 0.2},
                    "_meta": {"progressToken": secret},
                }
                streams[secret] = await session.post("tools/call", params)

            async with anyio.create_task_group() as both:
                both.start_soon(talk, as_alice, "alice-secret")
                both.start_soon(talk, as_bob, "bob-secret")
            talked = _lean_calls(url, alice)
            hung, accepted = await _cancelled(as_alice, downstreams)
            with anyio.fail_after(10):
                while not Path(f"{downstreams.counter('echo')}.cancelled").exists():
                    await anyio.sleep(0.02)  # the downstream was told to stop it
            cancelled_too = _lean_calls(url, alice)
    finally:
        assert stop(board) == 0

    for by_lane, by_sdk in pairs:
        assert _same(by_lane) == _same(by_sdk), (by_lane, by_sdk)
    # Every routed call above was the lane's but the one to a server nobody configured.
    assert taken == len(ASKED) - 1 + 2 + 2 + 1, taken
    refused = json.loads(pairs[1][0]["result"]["content"][0]["text"])
    assert (
        refused["error"]["code"] == "TOOL_NOT_ADMITTED" and refused["error"]["details"]["principal"] == "bob"
    )
    limited = json.loads(pairs[-2][0]["result"]["content"][0]["text"])
    assert limited["error"]["code"] == "RATE_LIMITED", limited
    assert "error" in pairs[-3][0] or pairs[-3][0]["result"]["isError"], pairs[-3]
    withheld = json.loads(pairs[-1][0]["result"]["content"][0]["text"])
    assert withheld["error"]["code"] == "TOOL_CHANGED", withheld

    rows = calls(tmp_path / "audit" / "gateway.db")
    # Rows come in the order the calls were made: each lane call's row, then the SDK path's twin.
    *routed, cancelled_row = [row for row in rows if row["tool"] != "loud.work"]
    assert (cancelled_row["principal"], cancelled_row["tool"]) == ("alice", "echo.work"), cancelled_row
    assert len(routed) % 2 == 0 and len(routed) >= 2 * len(pairs), routed
    for lane_row, sdk_row in (routed[i : i + 2] for i in range(0, len(routed), 2)):
        assert _row(lane_row) == _row(sdk_row), (lane_row, sdk_row)
    assert [row["principal"] for row in rows if row["tool"] == "loud.work"] in (
        ["alice", "bob"],
        ["bob", "alice"],
    )

    assert talked == taken + 2
    # The cancelled call was the lane's; its POST ended without an answer.
    assert cancelled_too == talked + 1 and accepted == 202, (cancelled_too, accepted)
    assert hung.status_code == 200 and '"result"' not in hung.text and '"error"' not in hung.text, hung.text
    for secret, stream in streams.items():
        _only_its_own(secret, stream)


def _only_its_own(secret: str, stream: httpx2.Response) -> None:
    """A call's POST streamed its progress and log lines, then its answer: its own, nobody else's."""
    assert stream.headers["content-type"].startswith("text/event-stream"), stream.headers
    events = [json.loads(line[5:]) for line in stream.text.splitlines() if line.startswith("data:")]
    news = events[:-1]
    # Its progress under its own token; its log lines when the switchboard could tell whose
    # they were (a stdio downstream's log names no request: owners.py drops one sent while
    # both calls were in flight, and gives one to the call alone in flight).
    logs = [event["params"]["data"] for event in news if event["method"] == "notifications/message"]
    progress = [event["params"] for event in news if event["method"] == "notifications/progress"]
    assert set(logs) <= {f"log {secret}", f"stray {secret}"}, events
    assert progress == [{"progressToken": secret, "progress": 1.0, "message": f"progress {secret}"}]
    assert len(news) == len(logs) + len(progress), events
    assert json.loads(events[-1]["result"]["content"][0]["text"])["secret"] == secret
    other = "bob-secret" if secret == "alice-secret" else "alice-secret"
    assert other not in stream.text, stream.text
