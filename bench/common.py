"""Shared measuring tools. Ratios compare figures measured in the same run (noisy 2-core machines)."""

from __future__ import annotations

import os
import re
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from colibri.domains.proofs import sessions
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS

ECHO_SERVER = Path(__file__).with_name("echo_server.py")
# The same server on Colibri's stdio transport, a file of its own: echo_server.py imports nothing of Colibri.
ECHO_SERVER_PIPES = Path(__file__).with_name("echo_server_pipes.py")


def echo_params(*, pipes: bool = False) -> StdioServerParameters:
    """The bare SDK echo server; `pipes=True` serves it on Colibri's stdio transport."""
    args = [str(ECHO_SERVER_PIPES if pipes else ECHO_SERVER)]
    return StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))


def colibri_params(db_path: Path, **env: str) -> StdioServerParameters:
    full = {k: v for k, v in os.environ.items() if not k.startswith("COLIBRI_")}
    full.update(COLIBRI_DB_PATH=str(db_path), COLIBRI_LOG_LEVEL="warn", **env)
    return StdioServerParameters(command=sys.executable, args=["-m", "colibri", "serve"], env=full)


async def sequential_calls(
    params: StdioServerParameters,
    tool: str,
    arguments: Callable[[int], dict[str, Any]] | dict[str, Any],
    n: int,
    *,
    warmup: int = 50,
    client_validation: bool = True,
) -> list[float]:
    """Latency in seconds of each of n sequential calls over one stdio connection.

    `client_validation=False` turns off the SDK client's check of every result against the
    tool's output schema, a client-side cost that only tools declaring a schema pay.
    """
    make = arguments if callable(arguments) else (lambda _i: arguments)
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        if not client_validation:
            client.session.validate_tool_result = _no_validation  # type: ignore[method-assign]
        for i in range(warmup):
            await client.call_tool(tool, make(-1 - i))
        samples = []
        for i in range(n):
            start = time.perf_counter()
            result = await client.call_tool(tool, make(i))
            samples.append(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError(f"{tool} failed during the benchmark: {result.content}")
    return samples


@dataclass(frozen=True)
class Target:
    """A server and the call to time on it; `ready` is awaited once connected, before the warm-up
    (a switchboard: until its downstream is healthy)."""

    params: StdioServerParameters
    tool: str
    arguments: dict[str, Any]
    mode: str = "legacy"
    ready: Callable[[Client], Awaitable[None]] | None = None


async def alternating_calls(
    targets: dict[str, Target], n: int, *, rounds: int = 20, warmup: int = 50
) -> dict[str, list[float]]:
    """Latency in seconds of n sequential calls to each target. Every connection stays open and the
    targets take turns in blocks of n // rounds calls (the order reversed every other round), so a
    change in the machine's load during the run weighs on each alike; timed one after the other,
    one tree's server_ping / echo gave 1.21 to 1.45 in three runs."""
    async with AsyncExitStack() as stack:
        clients = {}
        for name, target in targets.items():
            client = await stack.enter_async_context(Client(target.params, mode=target.mode))
            await client.list_tools()
            if target.ready is not None:
                await target.ready(client)
            for _ in range(warmup):
                await client.call_tool(target.tool, target.arguments)
            clients[name] = client
        samples: dict[str, list[float]] = {name: [] for name in targets}
        names = list(targets)
        for round_number in range(rounds):
            for name in names if round_number % 2 == 0 else names[::-1]:
                client, target = clients[name], targets[name]
                for _ in range(n // rounds):
                    start = time.perf_counter()
                    result = await client.call_tool(target.tool, target.arguments)
                    samples[name].append(time.perf_counter() - start)
                    if result.is_error:
                        raise RuntimeError(f"{target.tool} failed during the benchmark: {result.content}")
    return samples


def start_session(db_path: Path) -> str:
    """A migrated database at `db_path` with one open session for stdio calls; its id."""
    db = SQLiteDatabase.open(db_path)
    try:
        migrate(db, MIGRATIONS)
        return sessions.start(db, None, "bench", "stdio benchmark").session_id
    finally:
        db.close()


def rate(samples: list[float]) -> float:
    return len(samples) / sum(samples)


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def in_process(fn: Callable[[], object], n: int) -> list[float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


@dataclass(frozen=True)
class Figure:
    """One printed figure with a target (`<= 1.5x`, `>= 300,000/s`): `python -m bench --check` judges it."""

    label: str
    value: float
    target: str

    @property
    def met(self) -> bool:
        match = _TARGET.match(self.target)
        if match is None:
            raise ValueError(
                f"target {self.target!r} of {self.label!r} is not '<= N', '>= N', '< N' or '> N'"
            )
        bound, op = float(match["bound"].replace(",", "")), match["op"]
        if op in ("<", ">"):
            return self.value < bound if op == "<" else self.value > bound
        return self.value <= bound if op in ("<=", "≤") else self.value >= bound


_TARGET = re.compile(r"\s*(?P<op><=|>=|≤|≥|<|>)\s*(?P<bound>[0-9][0-9,]*(?:\.[0-9]+)?)")
# Every figure printed with a target in this process, in order (read by __main__'s --check).
FIGURES: list[Figure] = []


def line(label: str, value: float, unit: str, target: str = "") -> None:
    verdict = ""
    if target:
        figure = Figure(label.strip(), value, target)
        FIGURES.append(figure)
        verdict = f"   target {target}" + ("" if figure.met else "   MISSED")
    print(f"{label:<58} {value:>12.3f} {unit}{verdict}", flush=True)


def median(samples: list[float]) -> float:
    return statistics.median(samples)


async def _no_validation(name: str, result: object) -> None:
    return None
