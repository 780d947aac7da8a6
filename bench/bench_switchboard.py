"""Switchboard overhead: the bare echo server called directly and through the switchboard.

Sequential calls over stdio (p50, p99, calls/s, and the ratio to direct, measured in the same run),
then 8 concurrent Streamable HTTP clients through the switchboard beside 8 calling the echo server
over HTTP directly. The bench client speaks the
handshake era to whatever it calls, and the switchboard connects to the echo server in that era too
(it tries the handshake first, transport.py); the direct baseline is also shown in the 2026 era
(`mode="auto"`), which costs more per call.
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

from bench.common import ECHO_SERVER, echo_params, line, percentile, rate

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


async def interleaved(config: Path, n: int, rounds: int = 20, warmup: int = 50) -> dict[str, list[float]]:
    """Sequential calls direct (both eras) and through the switchboard, in alternating blocks.

    All three connections stay open and take turns, so a change in the load of the machine during
    the run weighs on each alike instead of on whichever was measured at that moment.
    """
    async with (
        Client(echo_params(), mode="legacy") as direct,
        Client(echo_params(), mode="auto") as auto,
        Client(switchboard_params(config), mode="legacy") as routed,
    ):
        await wait_healthy(routed)
        targets = {"direct": (direct, "echo"), "auto": (auto, "echo"), "routed": (routed, "echo.echo")}
        for client, tool in targets.values():
            for i in range(warmup):
                await client.call_tool(tool, {"i": -i})
        samples: dict[str, list[float]] = {name: [] for name in targets}
        for _ in range(rounds):
            for name, (client, tool) in targets.items():
                for i in range(n // rounds):
                    start = time.perf_counter()
                    result = await client.call_tool(tool, {"i": i})
                    samples[name].append(time.perf_counter() - start)
                    if result.is_error:
                        raise RuntimeError(f"echo failed ({name}): {result.content}")
    return samples


async def run() -> None:
    with tempfile.TemporaryDirectory(prefix="colibri-bench-switchboard-") as folder:
        config = write_config(Path(folder))
        samples = await interleaved(config, CALLS)
        direct, direct_auto, routed = samples["direct"], samples["auto"], samples["routed"]
        direct_p50, auto_p50, routed_p50 = (percentile(s, 50) for s in (direct, direct_auto, routed))
        direct_p99, routed_p99 = percentile(direct, 99), percentile(routed, 99)
        line("direct echo over stdio (handshake era): p50", direct_p50 * 1000, "ms")
        line("direct echo over stdio (handshake era): p99", percentile(direct, 99) * 1000, "ms")
        line("direct echo over stdio (handshake era): sequential calls/s", rate(direct), "calls/s")
        line("direct echo over stdio (mode=auto, 2026 era): p50", auto_p50 * 1000, "ms")
        line("through the switchboard over stdio: p50", routed_p50 * 1000, "ms")
        line("through the switchboard over stdio: p99", percentile(routed, 99) * 1000, "ms")
        line("through the switchboard over stdio: sequential calls/s", rate(routed), "calls/s")
        line("switchboard p50 / direct p50 (handshake era)", routed_p50 / direct_p50, "x", "<= 1.3x")
        line("switchboard p99 / direct p99 (handshake era)", routed_p99 / direct_p99, "x", "<= 1.5x")
        line(
            "switchboard p50 / direct p50 (mode=auto, 2026 era)",
            routed_p50 / auto_p50,
            "x",
            "<= 1.3x",
        )
        direct_http = await direct_http_rate()
        http = await http_rate(config)
        line(f"{HTTP_CLIENTS} concurrent HTTP clients, echo server directly", direct_http, "calls/s")
        line(f"{HTTP_CLIENTS} concurrent HTTP clients through the switchboard", http, "calls/s")
        line("switchboard HTTP calls/s / direct HTTP calls/s", http / direct_http, "x")


def main() -> None:
    anyio.run(run)
