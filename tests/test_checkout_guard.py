"""The clean-checkout guard of tests/conftest.py, run by a real pytest in a git checkout of its own
(a temporary folder): what a test leaves there, ignored files and empty folders included, fails the
run by name, with or without xdist workers; bytecode and the tools' caches do not; Hypothesis keeps
nothing there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import missing_part

ROOT = Path(__file__).resolve().parent.parent
GITIGNORE = ".hypothesis/\ndata/\n__pycache__/\n.pytest_cache/\n.ruff_cache/\n"
CONFTEST = (
    "from tests.conftest import (\n"
    "    pytest_configure, pytest_sessionfinish, pytest_sessionstart, pytest_unconfigure\n"
    ")\n"
)

# What the test in the checkout leaves, and how the guard names it.
LEAVES = """
    (HERE / '.hypothesis' / 'examples').mkdir(parents=True)
    (HERE / '.hypothesis' / 'examples' / 'x').write_text('an ignored file')
    (HERE / 'stray.txt').write_text('an untracked file')
    (HERE / 'data').mkdir()
    (HERE / 'kept.txt').write_text('a changed file')
"""
NAMED = ["  !! .hypothesis/examples/x", "  ?? stray.txt", "   M kept.txt", "  empty folder data/"]
NOT_OUTPUT = """
    (HERE / 'pkg' / '__pycache__').mkdir()
    (HERE / 'pkg' / '__pycache__' / 'm.cpython-311.pyc').write_bytes(b'')
    (HERE / '.ruff_cache').mkdir()
    (HERE / '.ruff_cache' / 'x').write_text('a tool cache')


@given(st.text())
def test_hypothesis(text: str) -> None:
    assert isinstance(text, str)
"""
WORKERS = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])


def _checkout(folder: Path, body: str) -> Path:
    """A git checkout of a few committed files, the guard's hooks and a test doing `body`."""
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "m.py").write_text("")
    (folder / ".gitignore").write_text(GITIGNORE)
    (folder / "kept.txt").write_text("committed")
    (folder / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    git = ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "start"]):
        subprocess.run([*git, *args], check=True, capture_output=True, timeout=60)
    # Untracked from the start, so not the run's doing.
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "test_it.py").write_text(
        "from pathlib import Path\n\nfrom hypothesis import given, strategies as st\n\n"
        f"HERE = Path(__file__).parent\n\n\ndef test_it() -> None:{body}"
    )
    return folder


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(autouse=True)
def _git() -> None:
    if subprocess.run(["git", "--version"], capture_output=True, check=False).returncode != 0:
        missing_part("git: the guard compares `git status`")


@WORKERS
def test_what_a_test_leaves_fails_the_run_by_name(tmp_path: Path, workers: list[str]) -> None:
    done = _pytest(_checkout(tmp_path, LEAVES), *workers)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "1 passed" in done.stdout, "the test itself passed: the guard failed the run"
    report = done.stdout.split("left in the checkout", 1)[1].split("\n\n", 1)[0]
    named = [line for line in report.splitlines() if line.startswith("  ")]
    assert sorted(named) == sorted(NAMED), done.stdout


@WORKERS
def test_bytecode_the_tools_caches_and_hypothesis_leave_nothing_to_report(
    tmp_path: Path, workers: list[str]
) -> None:
    done = _pytest(_checkout(tmp_path, NOT_OUTPUT), *workers)
    assert done.returncode == pytest.ExitCode.OK, done.stdout + done.stderr
    assert "left in the checkout" not in done.stdout
    assert "2 passed" in done.stdout
    assert not (tmp_path / ".hypothesis").exists(), "Hypothesis kept its files in the checkout"
