"""Switchboard overhead: the bare echo server called directly and through the switchboard, with its
audit store (SPEC §15: every call's row committed before its answer) off and on (SPEC §25).

One client over stdio (p50, p99, calls/s, and the ratio to direct), in three runs: in each, one
client holds a connection to the echo server directly (both eras), to a switchboard without an
audit store and to one with a SQLite audit store (COLIBRI_DB_SYNC=normal), and calls them in
alternating blocks, so the load of the machine weighs on each alike; the median of the three runs'
ratios is the figure (target: the audited gateway's p50 <= 1.5x direct). The bench client speaks
the handshake era to whatever it calls, and the switchboard connects to the echo server in that era
too (it tries the handshake first, transport.py); the direct baseline is also shown in the 2026 era.

Then HTTP on both sides: the HTTP echo server (http_echo_server.py) called by 8 concurrent clients
directly, and through each switchboard's HTTP face in front of it, in alternating blocks of
HTTP_SECONDS, over HTTP_ROUNDS rounds. Each block is timed after every client has connected and
warmed up; the CPU each process spent in the window (from /proc/PID/stat, all its threads) is
divided by the calls answered in it. Targets, each the median of the rounds' ratios: the audited
gateway's calls/s >= 0.8x direct's, and its CPU per call <= 1.5x the echo server's own CPU per
call in the same block.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench.common import ECHO_SERVER, Target, alternating_calls, echo_params, line, percentile, rate
from bench.procs import cpu_seconds, free_port, wait_listening
from colibri.domains.log.keys import write_key_file
from colibri.domains.log.note import Signer

CALLS = 1000
RUNS = 3
HTTP_CLIENTS = 8
HTTP_SECONDS = float(os.environ.get("BENCH_SWITCHBOARD_HTTP_SECONDS", "4"))
HTTP_ROUNDS = int(os.environ.get("BENCH_SWITCHBOARD_HTTP_ROUNDS", "3"))
HTTP_WARMUP = 10  # calls per client before a block's window opens
HTTP_ECHO_SERVER = Path(__file__).with_name("http_echo_server.py")


def write_config(folder: Path, *, audit: bool = False, url: str | None = None) -> Path:
    """A switchboard config in `folder` in front of the echo server (over stdio; at `url` over HTTP);
    `audit` adds a SQLite audit store there, signed with a key made for it (so no key is made, nor
    announced, at start)."""
    config = folder / f"switchboard{'-audited' if audit else ''}{'-http' if url else ''}.json"
    echo: dict[str, Any] = {"url": url} if url else {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    sections: dict[str, Any] = {}
    if audit:
        key = folder / "audit.key"
        if not key.exists():
            write_key_file(key, Signer.generate("bench-audit"))
        store = folder / f"audit{'-http' if url else ''}.db"
        sections["audit"] = {"db": str(store), "signing_key": str(key)}
    config.write_text(json.dumps({"mcpServers": {"echo": echo}, **sections}))
    return config


def switchboard_params(config: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLIBRI_")}
    env["COLIBRI_LOG_LEVEL"] = "warn"
    env["COLIBRI_DB_SYNC"] = "normal"
    return StdioServerParameters(
        command=sys.executable, args=["-m", "colibri", "switchboard", "--config", str(config)], env=env
    )


async def wait_healthy(client: Client, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        result = await client.call_tool("switchboard_status", {})
        servers: list[dict[str, Any]] = (result.structured_content or {})["data"]["servers"]
        if all(server["state"] == "HEALTHY" for server in servers):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the downstream never became healthy: {servers}")
        await anyio.sleep(0.05)


@dataclass(frozen=True)
class Block:
    """One measured window of 8 concurrent clients: calls/s, and CPU seconds per call of each process."""

    rate: float
    cpu_per_call: dict[str, float]


async def http_block(url: str, tool: str, watched: dict[str, int]) -> Block:
    """HTTP_CLIENTS concurrent sequential clients (each its own session) calling `tool` at `url`:
    connected and warmed up first, then timed for HTTP_SECONDS together, with the CPU each
    process of `watched` spent between the window's start and the last call's answer."""
    calls, ready, finished = 0, anyio.Event(), anyio.Event()
    waiting = [HTTP_CLIENTS, HTTP_CLIENTS]
    window: dict[str, float] = {}

    async def one(index: int) -> None:
        nonlocal calls
        async with Client(url, mode="legacy") as client:
            for _ in range(HTTP_WARMUP):
                await client.call_tool(tool, {"warmup": index})
            waiting[0] -= 1
            if waiting[0] == 0:  # the last one warmed up starts the window for all
                window.update({name: cpu_seconds(pid) for name, pid in watched.items()})
                window["started"] = time.perf_counter()
                window["deadline"] = window["started"] + HTTP_SECONDS
                ready.set()
            await ready.wait()
            while time.perf_counter() < window["deadline"]:
                result = await client.call_tool(tool, {"client": index})
                if result.is_error:
                    raise RuntimeError(f"{tool} failed during the benchmark: {result.content}")
                calls += 1
            waiting[1] -= 1
            if waiting[1] == 0:  # every call counted has its answer: the window ends
                window["elapsed"] = time.perf_counter() - window["started"]
                for name, pid in watched.items():
                    window[name] = (cpu_seconds(pid) - window[name]) / calls
                finished.set()
            await finished.wait()  # no session closes (and costs CPU) before the window ends

    async with anyio.create_task_group() as tasks:
        for index in range(HTTP_CLIENTS):
            tasks.start_soon(one, index)
    return Block(calls / window["elapsed"], {name: window[name] for name in watched})


@asynccontextmanager
async def started(command: list[str], port: int, env: dict[str, str] | None = None) -> AsyncIterator[int]:
    """`command` running until the block ends, once something listens on `port`; its pid."""
    process = subprocess.Popen(command, env=env)
    try:
        await wait_listening(port, process)
        yield process.pid
    finally:
        process.terminate()
        process.wait(20)


async def http_figures() -> None:
    """The switchboard's HTTP face in front of the HTTP echo server, beside the same echo server
    called directly: 8 clients each, in alternating blocks; calls/s and CPU per call (SPEC §25)."""
    echo_port, board_ports = free_port(), {"routed": free_port(), "audited": free_port()}
    echo_url = f"http://127.0.0.1:{echo_port}/mcp"
    with tempfile.TemporaryDirectory(prefix="colibri-bench-switchboard-http-") as folder:
        async with AsyncExitStack() as stack:
            echo = await stack.enter_async_context(
                started([sys.executable, str(HTTP_ECHO_SERVER), str(echo_port)], echo_port)
            )
            urls, boards = {"direct": echo_url}, {}
            for name, port in board_ports.items():
                config = write_config(Path(folder), audit=name == "audited", url=echo_url)
                params = switchboard_params(config)
                command = [params.command, *params.args, "--http", f"127.0.0.1:{port}"]
                boards[name] = await stack.enter_async_context(started(command, port, params.env))
                urls[name] = f"http://127.0.0.1:{port}/mcp"
                async with Client(urls[name], mode="legacy") as client:
                    await wait_healthy(client)
            blocks: dict[str, list[Block]] = {name: [] for name in urls}
            for number in range(1, HTTP_ROUNDS + 1):
                order = list(urls) if number % 2 else list(urls)[::-1]
                for name in order:
                    tool = "echo" if name == "direct" else "echo.echo"
                    watched = {"echo": echo} | ({} if name == "direct" else {"board": boards[name]})
                    blocks[name].append(block := await http_block(urls[name], tool, watched))
                    report_block(number, name, block)
    summarize_http(blocks)


def report_block(number: int, name: str, block: Block) -> None:
    label = {"direct": "echo server directly", "routed": "switchboard, audit store off"}.get(
        name, "switchboard, audit store on"
    )
    line(f"http run {number}: {HTTP_CLIENTS} clients, {label}: calls/s", block.rate, "calls/s")
    line(f"http run {number}: {label}: echo server CPU per call", block.cpu_per_call["echo"] * 1000, "ms")
    if "board" in block.cpu_per_call:
        line(
            f"http run {number}: {label}: switchboard CPU per call", block.cpu_per_call["board"] * 1000, "ms"
        )


def summarize_http(blocks: dict[str, list[Block]]) -> None:
    """Each figure the median of the rounds' ratios (every round's shown), measured in the same round."""
    for name, label, target in (("audited", "audit store on", True), ("routed", "audit store off", False)):
        pairs = zip(blocks[name], blocks["direct"], strict=True)
        rates = sorted(gateway.rate / direct.rate for gateway, direct in pairs)
        cpu = sorted(b.cpu_per_call["board"] / b.cpu_per_call["echo"] for b in blocks[name])
        for what, figures, goal in (
            (f"calls/s / direct's, {HTTP_CLIENTS} HTTP clients", rates, ">= 0.8"),
            ("CPU per call / the echo server's (HTTP both sides)", cpu, "<= 1.5"),
        ):
            shown = ", ".join(f"{figure:.3f}" for figure in figures)
            median_of = f"median of {len(figures)} [{shown}]"
            line(
                f"switchboard ({label}) {what}, {median_of}",
                statistics.median(figures),
                "x",
                goal if target else "",
            )


async def interleaved(
    configs: dict[str, Path], n: int, rounds: int = 20, warmup: int = 50
) -> dict[str, list[float]]:
    """Sequential calls direct (both eras) and through each switchboard, taking turns in blocks
    (common.alternating_calls), so a change in the load of the machine during the run weighs on each
    alike instead of on whichever was measured at that moment."""
    arguments = {"i": 1}
    targets = {
        "direct": Target(echo_params(), "echo", arguments),
        "auto": Target(echo_params(), "echo", arguments, mode="auto"),
    }
    for name, config in configs.items():
        targets[name] = Target(switchboard_params(config), "echo.echo", arguments, ready=wait_healthy)
    return await alternating_calls(targets, n, rounds=rounds, warmup=warmup)


def report_run(number: int, samples: dict[str, list[float]]) -> dict[str, float]:
    """One run's lines; its ratios to direct (p50 and p99 of each switchboard)."""
    direct50, direct99 = percentile(samples["direct"], 50), percentile(samples["direct"], 99)
    line(f"run {number}: direct echo over stdio (handshake era): p50", direct50 * 1000, "ms")
    line(f"run {number}: direct echo over stdio (handshake era): p99", direct99 * 1000, "ms")
    auto50 = percentile(samples["auto"], 50)
    line(f"run {number}: direct echo (mode=auto, 2026 era): p50", auto50 * 1000, "ms")
    ratios = {}
    for name, label in (("routed", "audit store off"), ("audited", "audit store on")):
        p50, p99 = percentile(samples[name], 50), percentile(samples[name], 99)
        line(f"run {number}: through the switchboard, {label}: p50", p50 * 1000, "ms")
        line(f"run {number}: through the switchboard, {label}: p99", p99 * 1000, "ms")
        line(f"run {number}: through the switchboard, {label}: calls/s", rate(samples[name]), "calls/s")
        ratios[f"{name} p50"], ratios[f"{name} p99"] = p50 / direct50, p99 / direct99
        ratios[f"{name} p50 auto"] = p50 / auto50
    return ratios


async def run() -> None:
    with tempfile.TemporaryDirectory(prefix="colibri-bench-switchboard-") as folder:
        configs = {"routed": write_config(Path(folder)), "audited": write_config(Path(folder), audit=True)}
        runs = [report_run(number, await interleaved(configs, CALLS)) for number in range(1, RUNS + 1)]
    for name, label in (("routed", "audit store off"), ("audited", "audit store on")):
        for key, what in (("p50", "p50"), ("p99", "p99"), ("p50 auto", "p50 (2026)")):
            figures = sorted(run[f"{name} {key}"] for run in runs)
            shown = ", ".join(f"{figure:.3f}" for figure in figures)
            # SPEC §25 sets one target over stdio: the audited gateway's p50 for one client.
            goal = "<= 1.5" if (name, key) == ("audited", "p50") else ""
            label_of = f"switchboard ({label}) {what} / direct, median of {RUNS} [{shown}]"
            line(label_of, statistics.median(figures), "x", goal)
    await http_figures()


def main() -> None:
    anyio.run(run)
