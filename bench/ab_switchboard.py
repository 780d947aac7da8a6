"""A/B of two switchboards: is a change to the per-call path faster, beyond this machine's noise?

    git worktree add /tmp/before HEAD~1
    python -m bench.ab_switchboard /tmp/before/src src [ROUNDS]
    COLIBRI_AB_AUDIT=1 python -m bench.ab_switchboard /tmp/before/src src   # both with an audit store
    python -m bench.ab_switchboard --http /tmp/before/src src [ROUNDS]     # CPU per call over HTTP

One process holds three connections — the echo server directly, a switchboard run from the first
source tree and one run from the second — and calls them in alternating blocks (the order reversed
every other round), so a change in the load of the machine weighs on each alike. On 2 noisy cores,
`python -m bench switchboard` alone swings by ±0.15x between runs; a difference between A and B that
holds over several runs of this is real.

With `--http`, both switchboards (each with an audit store) serve HTTP in front of the HTTP echo
server, and 8 clients call each in turn, in blocks (bench_switchboard.http_block): each block's
calls/s and the CPU per call of the switchboard and of the echo server, from /proc; then the median
of each side's blocks.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from bench.bench_switchboard import (
    HTTP_ECHO_SERVER,
    Block,
    http_block,
    started,
    switchboard_params,
    wait_healthy,
    write_config,
)
from bench.common import Target, alternating_calls, echo_params, percentile
from bench.procs import free_port

BLOCK = 200
WARMUP = 50
USAGE = (
    "usage: python -m bench.ab_switchboard [--http] SOURCE_A SOURCE_B [ROUNDS]  (folders holding colibri/)"
)


def from_tree(source: Path, folder: Path) -> StdioServerParameters:
    """A switchboard run from `source`; with COLIBRI_AB_AUDIT=1, with a SQLite audit store (a tree
    from before the audit store would refuse the config's "audit" section: compare two that have it)."""
    audit = os.environ.get("COLIBRI_AB_AUDIT") == "1"
    params = switchboard_params(write_config(folder, audit=audit))
    params.env = {**(params.env or {}), "PYTHONPATH": str(source.resolve())}
    return params


async def compare(sources: list[Path], rounds: int) -> dict[str, list[float]]:
    targets = {"direct": Target(echo_params(), "echo", {"i": 1})}
    with tempfile.TemporaryDirectory(prefix="colibri-ab-") as folder:
        for label, source in zip("AB", sources, strict=True):
            config = Path(folder) / label
            config.mkdir()
            params = from_tree(source, config)
            targets[f"{label} {source}"] = Target(params, "echo.echo", {"i": 1}, ready=wait_healthy)
        return await alternating_calls(targets, BLOCK * rounds, rounds=rounds, warmup=WARMUP)


async def compare_http(sources: list[Path], rounds: int) -> dict[str, list[Block]]:
    echo_port = free_port()
    echo_url = f"http://127.0.0.1:{echo_port}/mcp"
    with tempfile.TemporaryDirectory(prefix="colibri-ab-http-") as folder:
        async with AsyncExitStack() as stack:
            command = [sys.executable, str(HTTP_ECHO_SERVER), str(echo_port)]
            echo = await stack.enter_async_context(started(command, echo_port))
            urls, boards = {}, {}
            for label, source in zip("AB", sources, strict=True):
                config = Path(folder) / label
                config.mkdir()
                params = switchboard_params(write_config(config, audit=True, url=echo_url))
                env = {**(params.env or {}), "PYTHONPATH": str(source.resolve())}
                port = free_port()
                served = [params.command, *params.args, "--http", f"127.0.0.1:{port}"]
                boards[label] = await stack.enter_async_context(started(served, port, env))
                urls[label] = f"http://127.0.0.1:{port}/mcp"
                async with Client(urls[label], mode="legacy") as client:
                    await wait_healthy(client)
            blocks: dict[str, list[Block]] = {"A": [], "B": []}
            for number in range(rounds):
                for label in "AB" if number % 2 == 0 else "BA":
                    block = await http_block(urls[label], "echo.echo", {"echo": echo, "board": boards[label]})
                    blocks[label].append(block)
                    cpu = {name: f"{seconds * 1000:.3f} ms" for name, seconds in block.cpu_per_call.items()}
                    print(
                        f"round {number + 1} {label}: {block.rate:.1f} calls/s, CPU per call {cpu}",
                        flush=True,
                    )
    return blocks


def main(argv: list[str]) -> int:
    http = argv[:1] == ["--http"]
    argv = argv[1:] if http else argv
    if len(argv) not in (2, 3) or not all(Path(arg).is_dir() for arg in argv[:2]):
        print(USAGE, file=sys.stderr)
        return 2
    rounds = int(argv[2]) if len(argv) == 3 else (4 if http else 30)
    if http:
        blocks = anyio.run(compare_http, [Path(arg) for arg in argv[:2]], rounds)
        for label, source in zip("AB", argv[:2], strict=True):
            board = statistics.median(block.cpu_per_call["board"] for block in blocks[label]) * 1000
            echo = statistics.median(block.cpu_per_call["echo"] for block in blocks[label]) * 1000
            calls = statistics.median(block.rate for block in blocks[label])
            print(
                f"{label} {source:40s} CPU per call {board:.3f} ms (echo {echo:.3f} ms), {calls:.1f} calls/s"
            )
        return 0
    samples = anyio.run(compare, [Path(arg) for arg in argv[:2]], rounds)
    direct50, direct99 = percentile(samples["direct"], 50), percentile(samples["direct"], 99)
    for name, times in samples.items():
        p50, p99 = percentile(times, 50), percentile(times, 99)
        print(
            f"{name:40s} p50 {p50 * 1000:.3f} ms ({p50 / direct50:.3f}x)  "
            f"p99 {p99 * 1000:.3f} ms ({p99 / direct99:.3f}x)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
