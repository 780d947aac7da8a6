"""Runtime core: audited server_ping and thought_record vs a bare SDK echo server, health latency,
cold start (SPEC §18 targets: server_ping >= 1.3x bare echo, thought_record >= 0.9x bare echo;
SPEC §25: cold start to initialize and to tools/list <= 1.1x bare, each).

BENCH_CORE_SECTIONS=cold measures only the cold start (BENCH_COLD_RUNS starts of each server)."""

from __future__ import annotations

import os
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
# Starts of each server, taking turns; the figures are medians of them all (SPEC §25: no best-of-N).
COLD_RUNS = int(os.environ.get("BENCH_COLD_RUNS", "21"))

# Prints the seconds from spawning the server to the end of its `initialize` handshake, then to
# its answer to the first tools/list. The client (and its imports) is ready before the clock starts.
_COLD_START = """
import sys, time, anyio
from mcp import Client, StdioServerParameters
async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    start = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        initialized = time.perf_counter()
        await client.list_tools()
        listed = time.perf_counter()
        print(initialized - start, listed - start)
anyio.run(main)
"""


def cold_starts(commands: dict[str, list[str]], folder: Path) -> dict[str, tuple[float, float]]:
    """Median seconds from spawning each command to its `initialize` answer and to its first
    tools/list answer. The commands take turns, run by run (the order reversed every other round):
    run as blocks, one after the other, a change in the machine's load between the blocks gave
    1.02, 1.10 and 1.34 for one tree."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    names = list(commands)
    for run in range(COLD_RUNS):
        for name in names if run % 2 == 0 else names[::-1]:
            samples[name].append(_cold_start(commands[name], folder / f"cold-{name}-{run}.db"))
    return {
        name: (median([first for first, _ in runs]), median([listed for _, listed in runs]))
        for name, runs in samples.items()
    }


def _cold_start(command: list[str], db: Path) -> tuple[float, float]:
    out = subprocess.run(
        [sys.executable, "-c", _COLD_START, *command],
        check=True,
        capture_output=True,
        text=True,
        env={"COLIBRI_DB_PATH": str(db), "COLIBRI_LOG_LEVEL": "warn", "PATH": "/usr/bin:/bin"},
    )
    initialized, listed = out.stdout.split()
    return float(initialized), float(listed)


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
        if os.environ.get("BENCH_CORE_SECTIONS") == "cold":
            cold_start_figures(Path(folder))
        else:
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

    cold_start_figures(tmp)


def cold_start_figures(tmp: Path) -> None:
    """SPEC §25: `initialize` and tools/list answered from the kept declarations, ≤ 1.1× the bare
    SDK server (bench/echo_server.py, which imports nothing of Colibri), each on a fresh database."""
    cold = cold_starts(
        {
            "bare": [sys.executable, str(echo_params().args[0])],
            "colibri": [sys.executable, "-m", "colibri", "serve"],
        },
        tmp,
    )
    (bare_init, bare_list), (colibri_init, colibri_list) = cold["bare"], cold["colibri"]
    runs = f"median of {COLD_RUNS} starts each, taking turns"
    line(f"cold start to initialize answered: bare SDK server ({runs})", bare_init * 1000, "ms")
    line("cold start to initialize answered: colibri serve", colibri_init * 1000, "ms")
    line("ratio cold start to initialize colibri / bare", colibri_init / bare_init, "x", "<= 1.1x")
    line("cold start to first tools/list: bare SDK server", bare_list * 1000, "ms")
    line("cold start to first tools/list: colibri serve", colibri_list * 1000, "ms")
    line("ratio cold start to tools/list colibri / bare", colibri_list / bare_list, "x", "<= 1.1x")
