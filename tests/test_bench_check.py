"""`python -m bench --check` (SPEC §25): a figure printed with a target is judged by it, and a run
that misses one exits 1 naming it. Driven through the real command on a tiny benchmark module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from bench.common import Figure

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("value", "target", "met"),
    [
        (1.2, "<= 1.3x", True),
        (1.31, "<= 1.3x", False),
        (300_000, ">= 300,000/s", True),
        (299_999, ">= 300,000/s", False),
        (0.5, "<= 0.5 s", True),
        (0.89, "≥ 0.9", False),
        (2.0, "< 2 ms", False),
        (1.9, "< 2 ms", True),
    ],
)
def test_a_target_is_read_as_a_bound(value: float, target: str, met: bool) -> None:
    assert Figure("figure", value, target).met is met


def test_a_target_that_is_no_bound_is_an_error_not_a_pass() -> None:
    with pytest.raises(ValueError, match="not '<= N', '>= N'"):
        _ = Figure("figure", 1.0, "about 2").met


def test_check_exits_1_naming_each_missed_target(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    for name in ("__init__.py", "__main__.py", "common.py"):
        (tmp_path / "bench" / name).write_text((ROOT / "bench" / name).read_text())
    (tmp_path / "bench" / "bench_tiny.py").write_text(
        "from bench.common import line\n\n\ndef main() -> None:\n"
        "    line('fast enough', 1.2, 'x', '<= 1.5x')\n"
        "    line('too slow', 2.0, 'x', '<= 1.5x')\n"
        "    line('no target', 9.0, 'x')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "src")])}
    run = subprocess.run(
        [sys.executable, "-m", "bench", "--check", "tiny"],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stderr
    assert "1 of 2 targets met" in run.stdout
    assert "MISSED too slow: 2.000, target <= 1.5x" in run.stdout
    assert "MISSED fast enough" not in run.stdout
    plain = subprocess.run(
        [sys.executable, "-m", "bench", "tiny"],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert plain.returncode == 0, plain.stderr
