"""The 2026-07-28 request checks over Streamable HTTP, on both programs (SPEC §17): a header that
contradicts the body is HeaderMismatch (-32020, HTTP 400), a version the server does not serve is
UnsupportedProtocolVersion (-32022, HTTP 400, naming the versions it does), and neither reaches a
tool: `colibri serve` writes nothing, the switchboard forwards nothing to its downstream."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.http.helpers import http_env, running
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)

MODERN = "2026-07-28"


def post(
    url: str, method: str, params: dict[str, Any], headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    """One modern request; its HTTP status and JSON-RPC answer (from JSON or a one-event SSE body)."""
    version = headers.get("MCP-Protocol-Version", MODERN)
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text = response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        status, text = refused.code, refused.read().decode()
    if text.lstrip().startswith("{"):
        return status, json.loads(text)
    data = [line.removeprefix("data:").strip() for line in text.splitlines() if line.startswith("data:")]
    return status, json.loads(data[-1])


def headers(method: str, name: str | None = None, version: str = MODERN) -> dict[str, str]:
    sent = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    if name is not None:
        sent["Mcp-Name"] = name
    return sent


def refusals(url: str, tool: str, arguments: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    params = {"name": tool, "arguments": arguments}
    return [
        post(url, "tools/call", params, headers("tools/list", tool)),  # Mcp-Method says another method
        post(url, "tools/call", params, headers("tools/call", "another_tool")),  # Mcp-Name another tool
        post(url, "tools/call", params, headers("tools/call")),  # Mcp-Name missing
    ]


def unsupported(url: str, tool: str) -> tuple[int, dict[str, Any]]:
    return post(url, "tools/call", {"name": tool, "arguments": {}}, headers("tools/call", tool, "2099-01-01"))


def check(answers: list[tuple[int, dict[str, Any]]], version: tuple[int, dict[str, Any]]) -> None:
    for status, answer in answers:
        assert status == 400 and answer["error"]["code"] == -32020, answer
    status, answer = version
    assert status == 400 and answer["error"]["code"] == -32022, answer
    assert (
        MODERN in answer["error"]["data"]["supported"]
        and answer["error"]["data"]["requested"] == "2099-01-01"
    )


@pytest.fixture
def switchboard_url(tmp_path: Path) -> Iterator[tuple[str, Downstreams]]:
    downstreams = Downstreams(tmp_path)
    config = write_config(tmp_path, {"f": downstreams.fault("f")}, health={"readiness_s": 60})
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, board)
        yield f"http://127.0.0.1:{port}/mcp", downstreams
    finally:
        stop(board)


def test_colibri_serve_refuses_what_contradicts_itself(tmp_path: Path) -> None:
    with running(http_env(tmp_path), tmp_path, "--no-auth") as server:
        url = server.url  # type: ignore[attr-defined]
        check(refusals(url, "task_create", {"title": "never"}), unsupported(url, "task_create"))
        status, listed = post(
            url, "tools/call", {"name": "task_list", "arguments": {}}, headers("tools/call", "task_list")
        )
    assert status == 200 and listed["result"]["structuredContent"]["data"]["tasks"] == [], listed


def test_the_switchboard_refuses_what_contradicts_itself_and_forwards_nothing(
    switchboard_url: tuple[str, Downstreams],
) -> None:
    url, downstreams = switchboard_url
    ok = post(url, "tools/call", {"name": "f.info", "arguments": {}}, headers("tools/call", "f.info"))
    assert ok[0] == 200 and "result" in ok[1], ok
    check(refusals(url, "f.work", {"value": 1}), unsupported(url, "f.work"))
    assert downstreams.calls("f") == 0, "a refused request reached the downstream"
