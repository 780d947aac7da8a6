"""The switchboard's HTTP face: bearer tokens, --no-auth on loopback only, probes and metrics."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from colibri.core import tokens
from tests.switchboard.helpers import (
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

pytestmark = pytest.mark.anyio


def create_token(name: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "colibri", "token", "create", name, "--file", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def get(url: str, token: str | None = None, method: str = "GET", body: Any = None) -> tuple[int, str]:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


@asynccontextmanager
async def http_client(url: str, token: str) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        yield client


def test_token_create_prints_the_token_once_and_stores_only_its_hash(tmp_path: Path) -> None:
    path = tmp_path / "tokens.jsonl"
    first = create_token("ci", path)
    second = create_token("alice", path)
    again = create_token("ci", path)
    token = first.stdout.strip()
    stored = [json.loads(line) for line in path.read_text().splitlines()]
    assert first.returncode == 0 and token.startswith("col_") and len(token) > 40
    assert second.returncode == 0 and second.stdout.strip() != token
    assert stored[0] == {"name": "ci", "sha256": tokens.digest(token)}
    assert [entry["name"] for entry in stored] == ["ci", "alice"]
    assert token not in path.read_text()
    assert again.returncode == 2 and "exists" in again.stderr and again.stdout == ""
    assert path.stat().st_mode & 0o777 == 0o600


async def test_tokens_guard_mcp_and_metrics_while_the_probes_stay_open(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    tokens_file = tmp_path / "tokens.jsonl"
    token = create_token("ci", tokens_file).stdout.strip()
    port = free_port()
    health = {"liveness_s": 0.2, "readiness_s": 0.5, "check_timeout_s": 2, "restart_backoff_s": 5}
    config = write_config(
        tmp_path,
        {"good": downstreams.fault("good"), "stuck": downstreams.fault("stuck", "hang")},
        health=health,
        auth={"tokens_file": str(tokens_file)},
    )
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, board)
        early = get(f"{base}/readyz")
        deadline = time.monotonic() + 15
        while (ready := get(f"{base}/readyz"))[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        anonymous = get(f"{base}/mcp", method="POST", body=ping)
        forged = get(f"{base}/mcp", token="col_forged", method="POST", body=ping)
        healthz = get(f"{base}/healthz")
        # /metrics names the servers and their failures: with a tokens file it needs a token (SPEC §14).
        anonymous_metrics = get(f"{base}/metrics")
        async with http_client(f"{base}/mcp", token) as client:
            await wait_for_state(client, "good", "HEALTHY")
            before = metrics(get(f"{base}/metrics", token)[1])
            for n in range(3):
                await client.call_tool("good.work", {"n": n})
            after = metrics(get(f"{base}/metrics", token)[1])
    finally:
        assert stop(board) == 0

    # The hung server has no verdict until its handshake times out (10 s): not ready before that.
    assert early[0] == 503 and "stuck" in json.loads(early[1])["waiting_for_first_verdict"]
    assert ready[0] == 200 and json.loads(ready[1]) == {
        "ready": True,
        "waiting_for_first_verdict": [],
        "routable": ["good"],
    }
    assert anonymous[0] == 401 and forged[0] == 401 and anonymous_metrics[0] == 401
    assert healthz == (200, '{"status":"ok"}')
    calls = ("colibri_switchboard_calls_total", (("outcome", "ok"), ("server", "good"), ("tool", "work")))
    assert after[calls] == before.get(calls, 0) + 3
    healthy = ("colibri_switchboard_server_state", (("server", "good"), ("state", "HEALTHY")))
    unhealthy = ("colibri_switchboard_server_state", (("server", "stuck"), ("state", "UNHEALTHY")))
    assert after[healthy] == 1 and after[unhealthy] == 1
    moved = (
        "colibri_switchboard_transitions_total",
        (("server", "good"), ("source", "STARTING"), ("target", "HEALTHY")),
    )
    assert after[moved] == 1
    latency = ("colibri_switchboard_call_seconds_count", (("server", "good"),))
    assert after[latency] == before.get(latency, 0) + 3


def metrics(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a /metrics page, parsed by prometheus_client's own parser."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.mark.parametrize(
    ("extra", "auth", "expected"),
    [
        (["--http", "0.0.0.0:8765", "--no-auth"], True, "--no-auth is allowed only on a loopback address"),
        (["--http", "0.0.0.0:8765"], False, 'set "auth": {"tokens_file": PATH}'),
    ],
)
def test_no_auth_off_loopback_exits_2_with_one_line(
    tmp_path: Path, extra: list[str], auth: bool, expected: str
) -> None:
    sections = {"auth": {"tokens_file": str(tmp_path / "t")}} if auth else {}
    config = write_config(tmp_path, {"s": {"command": "x"}}, **sections)
    finished = subprocess.run(
        switchboard_command(config, *extra),
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert finished.returncode == 2 and finished.stdout == ""
    assert len(finished.stderr.strip().splitlines()) == 1 and expected in finished.stderr


async def test_metrics_beside_stdio_serving(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    port = free_port()
    config = write_config(tmp_path, {"one": downstreams.fault("one")}, health={"liveness_s": 0.2})
    async with switchboard(config, extra_args=["--metrics", f"127.0.0.1:{port}"]) as client:
        await wait_for_state(client, "one", "HEALTHY")
        await client.call_tool("one.work", {})
        ready = get(f"http://127.0.0.1:{port}/readyz")
        page = metrics(get(f"http://127.0.0.1:{port}/metrics")[1])
    assert ready[0] == 200
    key = ("colibri_switchboard_calls_total", (("outcome", "ok"), ("server", "one"), ("tool", "work")))
    assert page[key] == 1
