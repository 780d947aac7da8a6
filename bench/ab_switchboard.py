"""A/B of two switchboards: is a change to the per-call path faster, beyond this machine's noise?

    git worktree add /tmp/before HEAD~1
    python -m bench.ab_switchboard /tmp/before/src src [ROUNDS]
    COLIBRI_AB_AUDIT=1 python -m bench.ab_switchboard /tmp/before/src src   # both with an audit store

One process holds three connections — the echo server directly, a switchboard run from the first
source tree and one run from the second — and calls them in alternating blocks (the order reversed
every other round), so a change in the load of the machine weighs on each alike. On 2 noisy cores,
`python -m bench switchboard` alone swings by ±0.15x between runs; a difference between A and B that
holds over several runs of this is real.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import StdioServerParameters

from bench.bench_switchboard import switchboard_params, wait_healthy, write_config
from bench.common import Target, alternating_calls, echo_params, percentile

BLOCK = 200
WARMUP = 50
USAGE = "usage: python -m bench.ab_switchboard SOURCE_A SOURCE_B [ROUNDS]  (two folders holding colibri/)"


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


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or not all(Path(arg).is_dir() for arg in argv[:2]):
        print(USAGE, file=sys.stderr)
        return 2
    rounds = int(argv[2]) if len(argv) == 3 else 30
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
