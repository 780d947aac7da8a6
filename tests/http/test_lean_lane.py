"""`serve --http`'s lean lane (runtime/http_lean.py): a plain tools/call on a session past its
handshake is answered without the SDK's dispatch, with the answer the SDK would give.

One real server; raw HTTP beside the SDK's own client. Each lane answer is compared with the SDK's
answer to the same call sent with a progress token (which the lane leaves to the SDK): the same
status, the same headers in the same order, the same body byte for byte once the figures that
differ from one call to the next (ids, times, counters, digests) are masked. Whether the lane took
a call is read from its debug line in the server's log."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.http.helpers import HttpServer, http_client, http_env, make_token, running

pytestmark = pytest.mark.anyio
VERSION = "2025-11-25"
TAKEN = "lean lane: tools/call"
# What differs between two calls of the same request: numbers, hex ids and digests, times.
_VOLATILE = re.compile(rb"[0-9a-f]{8,}|[0-9]+")


def _taken(server: HttpServer) -> int:
    return server.log.read_text().count(TAKEN)


class Session:
    """A raw MCP session over one keep-alive connection."""

    opened: list[httpx2.Client] = []  # closed by the test at its end

    def __init__(self, server: HttpServer, token: str | None) -> None:
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx2.Client(
            timeout=30,
            headers={
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                **auth,
            },
        )
        Session.opened.append(self.http)
        self.url = server.url
        self.headers: dict[str, str] = {}
        self.next_id = 0

    def post(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> httpx2.Response:
        return self.http.post(
            self.url, content=json.dumps(message), headers={**self.headers, **(headers or {})}
        )

    def open(self) -> Session:
        opened = self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert opened.status_code == 200, opened.text
        self.headers = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": VERSION}
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
        return self

    def call(self, name: str, arguments: Any = None, *, progress: bool = False) -> httpx2.Response:
        self.next_id += 1
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        if progress:
            params["_meta"] = {"progressToken": f"p{self.next_id}"}
        return self.post({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params})


def _shape(answer: httpx2.Response) -> tuple[int, list[tuple[str, str]], bytes]:
    headers = [(k, v) for k, v in answer.headers.items() if k not in ("date", "content-length")]
    return answer.status_code, headers, _VOLATILE.sub(b"#", answer.content)


def _same_as_the_sdk(
    server: HttpServer, session: Session, name: str, arguments: Any = None
) -> dict[str, Any]:
    """The lane's answer to the call, asserted equal to the SDK's; returns its body."""
    before = _taken(server)
    lane = session.call(name, arguments)
    assert _taken(server) == before + 1, f"the lane did not take {name}: {server.log.read_text()[-2000:]}"
    sdk = session.call(name, arguments, progress=True)
    assert _taken(server) == before + 1, "a call with a progress token went through the lane"
    assert _shape(lane) == _shape(sdk)
    body: dict[str, Any] = lane.json()
    return body


def _until_taken(server: HttpServer, session: Session) -> None:
    """notifications/initialized reaches the session's loop after its 202: wait for the lane to know."""
    deadline = time.monotonic() + 20
    while _taken(server) == 0:
        assert time.monotonic() < deadline, "the lane never took a call"
        assert session.call("server_ping").status_code == 200


async def test_the_lane_answers_what_the_sdk_answers(tmp_path: Path) -> None:
    env = http_env(tmp_path, COLIBRI_LOG_LEVEL="debug")
    ana, bob = make_token(env, "ana"), make_token(env, "bob")
    with running(env, tmp_path) as server:
        try:
            await _lane_and_sdk(server, ana, bob)
        finally:
            while Session.opened:
                Session.opened.pop().close()


async def _lane_and_sdk(server: HttpServer, ana: str, bob: str) -> None:
    mine = Session(server, ana).open()
    _until_taken(server, mine)
    ping = _same_as_the_sdk(server, mine, "server_ping")
    assert ping["result"]["isError"] is False and ping["result"]["structuredContent"]["ok"] is True
    started = _same_as_the_sdk(server, mine, "audit_session_start", {"agent_id": "lane"})
    audit = started["result"]["structuredContent"]["data"]["session_id"]
    recorded = _same_as_the_sdk(
        server, mine, "thought_record", {"session_id": audit, "kind": "observation", "content": 'é\n"x"'}
    )
    assert recorded["result"]["structuredContent"]["ok"] is True
    # Errors the chain answers: an unknown tool, bad arguments (of the wrong type), the wrong
    # state (a session that does not exist, a finalized one).
    for name, arguments in [
        ("no_such_tool", {}),
        ("thought_record", {"session_id": 5, "kind": "observation", "content": "x"}),
        ("thought_record", {"session_id": "s-" + "0" * 8, "kind": "observation", "content": "x"}),
    ]:
        refused = _same_as_the_sdk(server, mine, name, arguments)
        assert refused["result"]["isError"] is True, refused
    assert mine.call("merkle_finalize", {"session_id": audit}).json()["result"]["isError"] is False
    finalized = _same_as_the_sdk(
        server, mine, "thought_record", {"session_id": audit, "kind": "observation", "content": "x"}
    )
    assert finalized["result"]["isError"] is True

    # What the lane must leave to the SDK: another token's session, an unknown session, no
    # token, a bad token, arguments that are no object, a foreign Origin, an Accept without JSON (on
    # a session whose usual headers the lane has passed), a batch, malformed JSON. Each gets the SDK's answer.
    before = _taken(server)
    theirs = Session(server, bob).open()
    stolen = Session(server, bob)
    stolen.headers = dict(mine.headers)
    assert stolen.call("server_ping").status_code == 404
    unknown = Session(server, ana)
    unknown.headers = {**mine.headers, "mcp-session-id": uuid.uuid4().hex}
    assert unknown.call("server_ping").status_code == 404
    for token in (None, "col_" + "x" * 43):
        anonymous = Session(server, token)
        anonymous.headers = dict(mine.headers)
        refused_401 = anonymous.call("server_ping")
        assert refused_401.status_code == 401 and "Bearer" in refused_401.headers["www-authenticate"]
    assert mine.call("thought_record", [1, 2]).json()["result"]["isError"] is True  # not an object
    ping = {"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "server_ping"}}
    assert mine.post(ping, {"Origin": "http://elsewhere.example"}).status_code == 403
    assert mine.post(ping, {"Accept": "text/event-stream"}).status_code == 406
    batch = mine.http.post(mine.url, content=b"[]", headers=mine.headers)
    malformed = mine.http.post(mine.url, content=b'{"method": "tools/call"', headers=mine.headers)
    assert batch.status_code == malformed.status_code == 400
    assert theirs.call("server_ping").status_code == 200  # its own session: taken
    assert _taken(server) == before + 1

    # The SDK's own client, in both eras: the handshake era is served by the lane, the 2026
    # era by the SDK, and both get the same envelope.
    answers = {}
    for era in ("legacy", "auto"):
        before = _taken(server)
        async with http_client(server.url, ana, mode=era) as client:
            answers[era] = (await client.call_tool("no_such_tool", {})).structured_content
            assert (await client.call_tool("server_ping", {})).structured_content["ok"] is True
        assert _taken(server) - before == (2 if era == "legacy" else 0), era
    assert answers["legacy"] == answers["auto"]
