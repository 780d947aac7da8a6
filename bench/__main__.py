"""Run the benchmarks: every `bench_*.py` beside this file, or only the names given."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem.removeprefix("bench_") for p in Path(__file__).parent.glob("bench_*.py"))
    for name in names:
        print(f"\n== {name} ==", flush=True)
        importlib.import_module(f"bench.bench_{name}").main()
    return 0


raise SystemExit(main(sys.argv[1:]))
