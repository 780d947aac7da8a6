"""The HTTP face answers a call that sends nothing but its answer as one JSON body, on a connection
the client keeps (SPEC §25); a call whose downstream speaks first still streams, in order (SPEC §21).
The face runs on the HTTP stack `serve --http` runs on (serving/http.py: httptools on uvloop).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)

pytestmark = pytest.mark.anyio

HOSTILE = Path(__file__).with_name("hostile_server.py")
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _request(number: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params}


def _client_port(response: httpx2.Response) -> int:
    """The local port of the connection `response` came on."""
    port: int = response.extensions["network_stream"].get_extra_info("client_addr")[1]
    return port


async def test_an_answer_alone_is_one_json_body_on_a_kept_connection_and_a_call_with_news_streams(
    tmp_path: Path,
) -> None:
    servers = {
        "quiet": Downstreams(tmp_path).fault("quiet"),
        "loud": {"command": sys.executable, "args": [str(HOSTILE)], "env": {"HOSTILE_RECORD": "/dev/null"}},
    }
    config = write_config(tmp_path, servers, health={"readiness_s": 60})
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for_port(port, board)
        async with httpx2.AsyncClient(headers=ACCEPT, timeout=30) as http:
            client_info = {"name": "test", "version": "1"}
            opened = await http.post(
                url,
                json=_request(
                    1,
                    "initialize",
                    {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client_info},
                ),
            )
            session = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            await http.post(
                url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            # The first tools/list of a session waits for every server's first verdict.
            listed = await http.post(url, headers=session, json=_request(2, "tools/list", {}))
            ports = [_client_port(listed)]
            quiet = []
            for number in (3, 4):
                quiet.append(
                    await http.post(
                        url, headers=session, json=_request(number, "tools/call", {"name": "quiet.work"})
                    )
                )
                ports.append(_client_port(quiet[-1]))
            call = {"name": "loud.work", "arguments": {"secret": "s1"}, "_meta": {"progressToken": "p1"}}
            loud = await http.post(url, headers=session, json=_request(5, "tools/call", call))
            libraries = Path(f"/proc/{board.pid}/maps").read_text()
    finally:
        stop(board)

    assert "/uvloop/loop." in libraries, "the event loop is not uvloop's"
    assert "/httptools/parser/parser." in libraries, "the HTTP parser is not httptools'"
    assert opened.headers["content-type"] == "application/json" and opened.json()["result"]["serverInfo"]
    assert {"quiet.work", "loud.work"} <= {tool["name"] for tool in listed.json()["result"]["tools"]}
    for number, answered in zip((3, 4), quiet, strict=True):
        assert answered.headers["content-type"] == "application/json", answered.headers
        assert answered.headers["content-length"] == str(len(answered.content))
        body = answered.json()
        assert body["id"] == number and body["result"]["isError"] is False, body
    # No stream left half read: both calls (and the list before them) came on one connection.
    assert ports[0] == ports[1] == ports[2], ports

    # The downstream's progress and log line for the call come first, on the call's own stream.
    assert loud.headers["content-type"].startswith("text/event-stream"), loud.headers
    events = [json.loads(line[5:]) for line in loud.text.splitlines() if line.startswith("data:")]
    news = {event.get("method"): event["params"] for event in events[:-1]}
    assert news.keys() == {"notifications/message", "notifications/progress"}, events
    assert news["notifications/progress"]["progressToken"] == "p1"
    assert events[-1]["id"] == 5 and json.loads(events[-1]["result"]["content"][0]["text"])["secret"] == "s1"
