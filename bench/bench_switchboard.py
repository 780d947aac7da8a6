"""Switchboard overhead: the bare echo server called directly and through the switchboard.

Sequential calls over stdio (p50, p99, calls/s, and the ratio to direct, measured in the same run),
then 8 concurrent Streamable HTTP clients through the switchboard. The bench client speaks the
handshake era to whatever it calls; the switchboard negotiates with the echo server itself
(`mode="auto"`, which settles on the 2026 era), so the direct baseline is measured both ways.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from bench.common import ECHO_SERVER, echo_params, line, percentile, rate, sequential_calls

CALLS = 1000
HTTP_CLIENTS = 8
HTTP_SECONDS = 5.0


def write_config(folder: Path) -> Path:
    config = folder / "switchboard.json"
    echo = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    config.write_text(json.dumps({"mcpServers": {"echo": echo}}))
    return config


def switchboard_params(config: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLIBRI_")}
    env["COLIBRI_LOG_LEVEL"] = "warn"
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


async def through_switchboard(config: Path, n: int, warmup: int = 50) -> list[float]:
    async with Client(switchboard_params(config), mode="legacy") as client:
        await wait_healthy(client)
        for i in range(warmup):
            await client.call_tool("echo.echo", {"i": -i})
        samples = []
        for i in range(n):
            start = time.perf_counter()
            result = await client.call_tool("echo.echo", {"i": i})
            samples.append(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError(f"echo failed through the switchboard: {result.content}")
    return samples


async def http_clients(url: str, clients: int, seconds: float) -> int:
    """Calls completed by `clients` concurrent sequential clients in `seconds`."""
    done = 0

    async def one(index: int) -> None:
        nonlocal done
        async with Client(url, mode="legacy") as client:
            await client.call_tool("echo.echo", {"warmup": index})
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline:
                await client.call_tool("echo.echo", {"client": index})
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


async def direct_calls(mode: str, n: int, warmup: int = 50) -> list[float]:
    """Like `bench.common.sequential_calls`, with the protocol era chosen by `mode`."""
    async with Client(echo_params(), mode=mode) as client:
        await client.list_tools()
        for i in range(warmup):
            await client.call_tool("echo", {"i": -i})
        samples = []
        for i in range(n):
            start = time.perf_counter()
            await client.call_tool("echo", {"i": i})
            samples.append(time.perf_counter() - start)
    return samples


async def run() -> None:
    with tempfile.TemporaryDirectory(prefix="colibri-bench-switchboard-") as folder:
        config = write_config(Path(folder))
        direct = await sequential_calls(echo_params(), "echo", lambda i: {"i": i}, CALLS)
        direct_auto = await direct_calls("auto", CALLS)
        routed = await through_switchboard(config, CALLS)
        direct_p50, auto_p50, routed_p50 = (percentile(s, 50) for s in (direct, direct_auto, routed))
        line("direct echo over stdio (handshake era): p50", direct_p50 * 1000, "ms")
        line("direct echo over stdio (handshake era): p99", percentile(direct, 99) * 1000, "ms")
        line("direct echo over stdio (handshake era): sequential calls/s", rate(direct), "calls/s")
        line("direct echo over stdio (mode=auto, 2026 era): p50", auto_p50 * 1000, "ms")
        line("through the switchboard over stdio: p50", routed_p50 * 1000, "ms")
        line("through the switchboard over stdio: p99", percentile(routed, 99) * 1000, "ms")
        line("through the switchboard over stdio: sequential calls/s", rate(routed), "calls/s")
        line("switchboard p50 / direct p50 (handshake era)", routed_p50 / direct_p50, "x", "<= 1.5x")
        line(
            "switchboard p50 / direct p50 (mode=auto, as the switchboard)",
            routed_p50 / auto_p50,
            "x",
            "<= 1.5x",
        )
        http = await http_rate(config)
        line(f"{HTTP_CLIENTS} concurrent HTTP clients through the switchboard", http, "calls/s")


def main() -> None:
    anyio.run(run)
