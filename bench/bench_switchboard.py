"""Switchboard overhead: the bare echo server called directly and through the switchboard, with its
audit store (SPEC §15: every call's row committed before its answer) off and on.

Sequential calls over stdio (p50, p99, calls/s, and the ratio to direct), in three runs: in each,
one client holds a connection to the echo server directly (both eras), to a switchboard without an
audit store and to one with a SQLite audit store (COLIBRI_DB_SYNC=normal), and calls them in
alternating blocks, so the load of the machine weighs on each alike; the median of the three runs'
ratios is the figure. Then 8 concurrent Streamable HTTP clients through each switchboard beside 8
calling the echo server over HTTP directly. The bench client speaks the handshake era to whatever it
calls, and the switchboard connects to the echo server in that era too (it tries the handshake
first, transport.py); the direct baseline is also shown in the 2026 era (`mode="auto"`).
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench.common import ECHO_SERVER, Target, alternating_calls, echo_params, line, percentile, rate
from colibri.domains.log.keys import write_key_file
from colibri.domains.log.note import Signer

CALLS = 1000
RUNS = 3
HTTP_CLIENTS = 8
# (the ratio, how it is named, its target) for each switchboard
TARGETS = (("p50", "p50", "<= 1.3x"), ("p99", "p99", "<= 1.5x"), ("p50 auto", "p50 (2026 era)", "<= 1.3x"))
HTTP_SECONDS = 5.0


def write_config(folder: Path, *, audit: bool = False) -> Path:
    """A switchboard config in `folder` in front of the echo server; `audit` adds a SQLite audit
    store there, signed with a key made for it (so no key is made, nor announced, at start)."""
    config = folder / ("switchboard-audited.json" if audit else "switchboard.json")
    echo = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    sections: dict[str, Any] = {}
    if audit:
        key = folder / "audit.key"
        if not key.exists():
            write_key_file(key, Signer.generate("bench-audit"))
        sections["audit"] = {"db": str(folder / "audit.db"), "signing_key": str(key)}
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


async def http_clients(url: str, clients: int, seconds: float, tool: str = "echo.echo") -> int:
    """Calls completed by `clients` concurrent sequential clients in `seconds`."""
    done = 0

    async def one(index: int) -> None:
        nonlocal done
        async with Client(url, mode="legacy") as client:
            await client.call_tool(tool, {"warmup": index})
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline:
                await client.call_tool(tool, {"client": index})
                done += 1

    async with anyio.create_task_group() as tasks:
        for index in range(clients):
            tasks.start_soon(one, index)
    return done


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def http_rate(config: Path) -> float:
    port = free_port()
    params = switchboard_params(config)
    command = [params.command, *params.args, "--http", f"127.0.0.1:{port}"]
    board = subprocess.Popen(command, env=params.env)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                await anyio.sleep(0.05)
        async with Client(url, mode="legacy") as client:
            await wait_healthy(client)
        started = time.perf_counter()
        calls = await http_clients(url, HTTP_CLIENTS, HTTP_SECONDS)
        return calls / (time.perf_counter() - started)
    finally:
        board.terminate()
        board.wait(20)


async def direct_http_rate() -> float:
    """The same 8 clients calling the echo server over Streamable HTTP with nothing between."""
    port = free_port()
    server = subprocess.Popen([sys.executable, str(ECHO_SERVER), "--http", f"127.0.0.1:{port}"])
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                await anyio.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
        started = time.perf_counter()
        calls = await http_clients(url, HTTP_CLIENTS, HTTP_SECONDS, tool="echo")
        return calls / (time.perf_counter() - started)
    finally:
        server.terminate()
        server.wait(20)


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
            target = "<= 1.3x"
            for key, what, goal in (
                ("p50", "p50", target),
                ("p99", "p99", "<= 1.5x"),
                ("p50 auto", "p50 (2026)", target),
            ):
                figures = sorted(run[f"{name} {key}"] for run in runs)
                shown = ", ".join(f"{figure:.3f}" for figure in figures)
                line(
                    f"switchboard ({label}) {what} / direct, median of {RUNS} [{shown}]",
                    statistics.median(figures),
                    "x",
                    goal,
                )
        direct_http = await direct_http_rate()
        line(f"{HTTP_CLIENTS} concurrent HTTP clients, echo server directly", direct_http, "calls/s")
        for name, label in (("routed", "audit store off"), ("audited", "audit store on")):
            http = await http_rate(configs[name])
            line(f"{HTTP_CLIENTS} concurrent HTTP clients, switchboard ({label})", http, "calls/s")
            line(f"switchboard ({label}) HTTP calls/s / direct HTTP calls/s", http / direct_http, "x")


def main() -> None:
    anyio.run(run)
