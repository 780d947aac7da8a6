"""`colibri serve --http` against the bare SDK Streamable HTTP echo server, in the same run.

First the server's CPU per call (SPEC §25: the budget), from /proc (server_cpu.py): server_ping
and thought_record, 8 clients, each ÷ the bare echo server's on the same HTTP stack, the stacks
measured side by side in alternating rounds: uvicorn's h11 on asyncio (what served before §25),
uvicorn's httptools on uvloop (the stack chosen in serving/http.py) and granian (embedded, uvloop).
Target on the chosen stack: ratio <= 1.5; printed too, what the switch from h11 saved.

Then calls/s with 1 and 8 concurrent HTTP clients (each its own session, one call at a time), in
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
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.helpers.static_issuer import StaticIssuer, static_issuer

from bench.common import _no_validation, line, median
from bench.procs import free_port, wait_listening_sync
from bench.server_cpu import cpu_per_call
from colibri.serving.http import STACK

SECONDS = float(os.environ.get("BENCH_HTTP_SECONDS", "3"))
ROUNDS = int(os.environ.get("BENCH_HTTP_ROUNDS", "3"))
CLIENT_COUNTS = (1, 8)
# Which parts run: "cpu" (CPU per call, per stack), "echo" (calls/s against the bare SDK), "oauth"
# (a provider's JWT against Colibri's token).
SECTIONS = os.environ.get("BENCH_HTTP_SECTIONS", "cpu,echo,oauth").split(",")
STACKS = os.environ.get("BENCH_HTTP_STACKS", "h11,httptools,granian").split(",")
CPU_CALLS = int(os.environ.get("BENCH_HTTP_CPU_CALLS", "2000"))  # the window, per server and round
CPU_CLIENTS = 8
HERE = Path(__file__).parent


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


def _colibri_env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLIBRI_")}
    env.update(COLIBRI_DB_PATH=str(folder / "bench.db"), COLIBRI_LOG_LEVEL="warn")
    return env


def _token(env: dict[str, str]) -> str:
    made = subprocess.run(
        [sys.executable, "-m", "colibri", "token", "create", "bench", "--scope", "write"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()


def _start_colibri(folder: Path, port: int, issuer: str) -> tuple[subprocess.Popen[bytes], str]:
    env = _colibri_env(folder)
    token = _token(env)
    process = subprocess.Popen(
        [sys.executable, "-m", "colibri", "serve", "--http", f"127.0.0.1:{port}", "--oauth-issuer", issuer],
        env=env,
    )
    return process, token


def cpu_section(folder: Path) -> None:
    """CPU per call on each stack: echo, server_ping, thought_record, in alternating rounds."""
    servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    tokens: dict[str, str] = {}
    try:
        for stack in STACKS:
            port = free_port()
            command = [sys.executable, str(HERE / "http_echo_server.py"), str(port), stack]
            servers[f"echo {stack}"] = subprocess.Popen(command), f"http://127.0.0.1:{port}/mcp"
            env = _colibri_env(folder / stack)
            (folder / stack).mkdir()
            tokens[stack], port = _token(env), free_port()
            command = [sys.executable, str(HERE / "colibri_on_stack.py"), stack, "serve", "--http"]
            process = subprocess.Popen([*command, f"127.0.0.1:{port}"], env=env)
            servers[f"colibri {stack}"] = process, f"http://127.0.0.1:{port}/mcp"
        for process, url in servers.values():
            wait_listening_sync(int(url.split(":")[2].split("/")[0]), process)
        figures: dict[tuple[str, str], list[float]] = {}
        for number in range(ROUNDS):
            # The stacks take turns, their order reversed every other round, so that a change in the
            # machine's load falls on each alike; each stack's echo and Colibri follow each other.
            for stack in STACKS if number % 2 == 0 else STACKS[::-1]:
                for name, tool, token in (
                    (f"echo {stack}", "echo", None),
                    (f"colibri {stack}", "server_ping", tokens[stack]),
                    (f"colibri {stack}", "thought_record", tokens[stack]),
                ):
                    process, url = servers[name]
                    measure = partial(cpu_per_call, calls=CPU_CALLS, clients=CPU_CLIENTS)
                    spent = anyio.run(measure, url, token, tool, process.pid)
                    figures.setdefault((stack, tool), []).append(spent * 1000)
        _report_cpu(figures)
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(20)


def _report_cpu(figures: dict[tuple[str, str], list[float]]) -> None:
    """Each stack's medians; the ratios to its echo (medians of the rounds' ratios); the saving."""
    for stack in STACKS:
        echo = figures[stack, "echo"]
        line(f"CPU per call, bare echo, {stack} (median, {CPU_CLIENTS} clients)", median(echo), "ms")
        for tool in ("server_ping", "thought_record"):
            own = figures[stack, tool]
            line(f"CPU per call, colibri {tool}, {stack} (median)", median(own), "ms")
            ratio = median([mine / base for mine, base in zip(own, echo, strict=True)])
            chosen = stack == STACK
            label = f"  ratio to the echo on {stack} ({tool})" + (" [the chosen stack]" if chosen else "")
            line(label, ratio, "x", "<= 1.5" if chosen else "")
        print(
            "  rounds (ms): "
            + "; ".join(
                f"{t} {[round(v, 3) for v in figures[stack, t]]}"
                for t in ("echo", "server_ping", "thought_record")
            )
        )
    if "h11" in STACKS and STACK in STACKS:
        for tool in ("server_ping", "thought_record"):
            before, after = figures["h11", tool], figures[STACK, tool]
            line(f"saved by the switch h11 -> {STACK}, {tool}", median(before) - median(after), "ms/call")
            line(
                f"  {STACK} / h11 ({tool}, median of the rounds)",
                median([a / b for a, b in zip(after, before, strict=True)]),
                "x",
            )


async def run(folder: Path, issuer: StaticIssuer) -> None:
    echo_port, colibri_port = free_port(), free_port()
    echo = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("http_echo_server.py")), str(echo_port)]
    )
    colibri, token = _start_colibri(folder, colibri_port, issuer.issuer)
    try:
        wait_listening_sync(echo_port, echo)
        wait_listening_sync(colibri_port, colibri)
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
    if "cpu" in SECTIONS:
        with tempfile.TemporaryDirectory(prefix="colibri-bench-http-cpu-") as folder:
            cpu_section(Path(folder))
    if "echo" not in SECTIONS and "oauth" not in SECTIONS:
        return
    with tempfile.TemporaryDirectory(prefix="colibri-bench-http-") as folder, static_issuer() as issuer:
        anyio.run(run, Path(folder), issuer)
