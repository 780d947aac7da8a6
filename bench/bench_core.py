"""Runtime core: audited server_ping and thought_record vs a bare SDK echo server, health latency,
cold start (SPEC §18 targets: cold start <= 1.1x bare, server_ping >= 1.3x bare echo,
thought_record >= 0.9x bare echo)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import StdioServerParameters

from bench.common import (
    Target,
    alternating_calls,
    colibri_params,
    echo_params,
    in_process,
    line,
    median,
    percentile,
    rate,
    sequential_calls,
    start_session,
)

CALLS = 2_000
COLD_RUNS = 9

_COLD_START = """
import sys, time, anyio
from mcp import Client, StdioServerParameters
async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    start = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        print(time.perf_counter() - start)
anyio.run(main)
"""


def cold_starts(commands: dict[str, list[str]], folder: Path) -> dict[str, float]:
    """Median seconds from spawning each command to its first tools/list answer. The commands take
    turns, run by run (the order reversed every other round): run as blocks, one after the other, a
    change in the machine's load between the blocks gave 1.02, 1.10 and 1.34 for one tree."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for run in range(COLD_RUNS):
        for name in names if run % 2 == 0 else names[::-1]:
            samples[name].append(_cold_start(commands[name], folder / f"cold-{name}-{run}.db"))
    return {name: median(values) for name, values in samples.items()}


def _cold_start(command: list[str], db: Path) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _COLD_START, *command],
        check=True,
        capture_output=True,
        text=True,
        env={"COLIBRI_DB_PATH": str(db), "COLIBRI_LOG_LEVEL": "warn", "PATH": "/usr/bin:/bin"},
    )
    return float(out.stdout.strip())


def health_in_process(tmp: Path) -> list[float]:
    from colibri.core.modes import Mode
    from colibri.core.spec import ToolContext
    from colibri.core.state import ServerState
    from colibri.domains.system.handlers import health
    from colibri.domains.system.models import NoArguments
    from colibri.storage import SQLiteDatabase
    from colibri.storage.migrations import migrate
    from colibri.tools.catalog import MIGRATIONS

    db = SQLiteDatabase.open(tmp / "health.db")
    migrate(db, MIGRATIONS)
    state = ServerState(version="bench", declared_mode=Mode.FULL, phase="phase2", mode=Mode.FULL, db=db)
    ctx, args = ToolContext(server=state, db=db), NoArguments()
    in_process(lambda: health(ctx, args), 1_000)
    return in_process(lambda: health(ctx, args), 10_000)


async def _raw(params: StdioServerParameters, tool: str) -> list[float]:
    return await sequential_calls(params, tool, {}, CALLS, client_validation=False)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="colibri-bench-core-") as folder:
        measure(Path(folder))


def measure(tmp: Path) -> None:
    session = start_session(tmp / "record.db")
    record_args = {"session_id": session, "kind": "decision", "content": "a sentence of twenty words " * 4}
    timed = anyio.run(
        alternating_calls,
        {
            "echo": Target(echo_params(), "echo", {}),
            "ping": Target(colibri_params(tmp / "ping.db"), "server_ping", {}),
            "record": Target(colibri_params(tmp / "record.db"), "thought_record", record_args),
        },
        CALLS,
    )
    echo, ping, records = timed["echo"], timed["ping"], timed["record"]
    echo_rate, ping_rate = rate(echo), rate(ping)
    line(
        f"bare echo server: {CALLS} sequential calls (taking turns with the two below)", echo_rate, "calls/s"
    )
    line(f"audited server_ping: {CALLS} sequential calls", ping_rate, "calls/s")
    line(f"audited thought_record: {CALLS} sequential calls", rate(records), "calls/s")
    line("ratio audited ping / bare echo", ping_rate / echo_rate, "x", ">= 1.3x")
    line("ratio thought_record / bare echo", rate(records) / echo_rate, "x", ">= 0.9x")
    line("  p50 latency bare echo", percentile(echo, 50) * 1000, "ms")
    line("  p50 latency audited ping", percentile(ping, 50) * 1000, "ms")
    same = anyio.run(sequential_calls, echo_params(pipes=True), "echo", {}, CALLS)
    line("like for like: bare echo on colibri's pipe transport", rate(same), "calls/s")
    line("ratio audited ping / that echo (the chain + database cost)", ping_rate / rate(same), "x")
    echo_raw = anyio.run(_raw, echo_params(pipes=True), "echo")
    ping_raw = anyio.run(_raw, colibri_params(tmp / "ping-raw.db"), "server_ping")
    line("no client-side schema check: echo on the pipe transport", rate(echo_raw), "calls/s")
    line("no client-side schema check: audited ping", rate(ping_raw), "calls/s")
    line("ratio (server-side cost only)", rate(ping_raw) / rate(echo_raw), "x")

    samples = health_in_process(tmp)
    line("server_health handler in process p50", percentile(samples, 50) * 1000, "ms")
    line("server_health handler in process p99", percentile(samples, 99) * 1000, "ms", "< 2 ms")

    cold = cold_starts(
        {
            "bare": [sys.executable, str(echo_params().args[0])],
            "colibri": [sys.executable, "-m", "colibri", "serve"],
        },
        tmp,
    )
    bare, colibri = cold["bare"], cold["colibri"]
    line("cold start to first tools/list: bare echo (median)", bare * 1000, "ms")
    line("cold start to first tools/list: colibri serve (median)", colibri * 1000, "ms")
    line("ratio cold start colibri / bare", colibri / bare, "x", "<= 1.1x")
