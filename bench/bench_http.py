"""`colibri serve --http` against the bare SDK Streamable HTTP echo server, in the same run.

calls/s with 1 and 8 concurrent HTTP clients (each its own session, one call at a time), in
alternating rounds with the baseline, for
server_ping and thought_record (bearer token on, as a team would run it), against the echo tool
of http_echo_server.py. The clients skip the SDK's output-schema check of each result (a
client-side cost the echo tool, having no schema, never pays). Target: ratio >= 0.8.

Then the same server with an identity provider's JWT against its own Colibri token (SPEC §20):
the server is started with `--oauth-issuer` naming an issuer this process serves (its JWKS is
fetched once, at start: no network per call), and the two tokens alternate round by round.
Target: ratio >= 0.95.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.helpers.static_issuer import StaticIssuer, static_issuer

from bench.common import _no_validation, line, median

SECONDS = float(os.environ.get("BENCH_HTTP_SECONDS", "3"))
ROUNDS = int(os.environ.get("BENCH_HTTP_ROUNDS", "3"))
CLIENT_COUNTS = (1, 8)
# Which parts run: "echo" (against the bare SDK), "oauth" (a provider's JWT against Colibri's token).
SECTIONS = os.environ.get("BENCH_HTTP_SECTIONS", "echo,oauth").split(",")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _wait(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


@asynccontextmanager
async def _client(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode="legacy") as client,
    ):
        client.session.validate_tool_result = _no_validation  # type: ignore[method-assign]
        yield client


async def calls_per_second(urls: Sequence[str], token: str | None, tool: str, clients: int) -> float:
    """Total calls/s of `clients` concurrent clients, each calling `tool` for SECONDS; client i
    calls urls[i mod len(urls)] (several URLs: replicas sharing one database)."""
    counts: list[int] = []

    async def one(index: int) -> None:
        async with _client(urls[index % len(urls)], token) as client:
            arguments: dict[str, Any] = {}
            if tool == "thought_record":
                started = await client.call_tool("audit_session_start", {"agent_id": f"bench-{index}"})
                session = (started.structured_content or {})["data"]["session_id"]
                arguments = {"session_id": session, "kind": "observation", "content": "x"}
            elif tool == "echo":
                arguments = {"n": index}
            for _ in range(20):  # warm-up
                await client.call_tool(tool, arguments)
            await start.wait()
            done = 0
            deadline = time.perf_counter() + SECONDS
            while time.perf_counter() < deadline:
                result = await client.call_tool(tool, arguments)
                if result.is_error:
                    raise RuntimeError(f"{tool} failed during the benchmark: {result.content}")
                done += 1
            counts.append(done)

    start = anyio.Event()
    async with anyio.create_task_group() as tasks:
        for index in range(clients):
            tasks.start_soon(one, index)
        await anyio.sleep(2.0)  # every client connected and warm
        start.set()
    return sum(counts) / SECONDS


def _start_colibri(folder: Path, port: int, issuer: str) -> tuple[subprocess.Popen[bytes], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLIBRI_")}
    env.update(COLIBRI_DB_PATH=str(folder / "bench.db"), COLIBRI_LOG_LEVEL="warn")
    made = subprocess.run(
        [sys.executable, "-m", "colibri", "token", "create", "bench", "--scope", "write"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "colibri", "serve", "--http", f"127.0.0.1:{port}", "--oauth-issuer", issuer],
        env=env,
    )
    return process, made.stdout.strip()


async def run(folder: Path, issuer: StaticIssuer) -> None:
    echo_port, colibri_port = _free_port(), _free_port()
    echo = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("http_echo_server.py")), str(echo_port)]
    )
    colibri, token = _start_colibri(folder, colibri_port, issuer.issuer)
    try:
        _wait(echo_port, echo)
        _wait(colibri_port, colibri)
        echo_url, colibri_url = f"http://127.0.0.1:{echo_port}/mcp", f"http://127.0.0.1:{colibri_port}/mcp"
        for clients in CLIENT_COUNTS if "echo" in SECTIONS else ():
            for tool in ("server_ping", "thought_record"):
                # Baseline and Colibri alternate, round by round, so a shift in the machine's load
                # falls on both; the ratio reported is the median of the rounds' ratios.
                baselines, measured, ratios = [], [], []
                for _ in range(ROUNDS):
                    baselines.append(await calls_per_second([echo_url], None, "echo", clients))
                    measured.append(await calls_per_second([colibri_url], token, tool, clients))
                    ratios.append(measured[-1] / baselines[-1])
                line(f"bare SDK echo over HTTP, {clients} client(s) (median)", median(baselines), "calls/s")
                line(f"colibri {tool} over HTTP, {clients} client(s) (median)", median(measured), "calls/s")
                line(f"  ratio to the echo baseline ({tool}, {clients})", median(ratios), "x", ">= 0.8")
        jwt_token = issuer.token(colibri_url, exp=int(time.time()) + 3600)
        for clients in CLIENT_COUNTS if "oauth" in SECTIONS else ():
            for tool in ("server_ping", "thought_record"):
                own, oauth, ratios = [], [], []
                for number in range(ROUNDS):
                    # Which token goes first alternates too: a round's second measure runs on a
                    # store the first has grown, and neither token should always pay for that.
                    if number % 2:
                        oauth.append(await calls_per_second([colibri_url], jwt_token, tool, clients))
                    own.append(await calls_per_second([colibri_url], token, tool, clients))
                    if not number % 2:
                        oauth.append(await calls_per_second([colibri_url], jwt_token, tool, clients))
                    ratios.append(oauth[-1] / own[-1])
                line(f"colibri {tool}, Colibri token, {clients} client(s) (median)", median(own), "calls/s")
                line(
                    f"colibri {tool}, OAuth JWT (RS256), {clients} client(s) (median)",
                    median(oauth),
                    "calls/s",
                )
                line(f"  ratio OAuth / Colibri token ({tool}, {clients})", median(ratios), "x", ">= 0.95")
    finally:
        for process in (echo, colibri):
            process.terminate()
            process.wait(20)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="colibri-bench-http-") as folder, static_issuer() as issuer:
        anyio.run(run, Path(folder), issuer)
