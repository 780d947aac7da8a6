"""The background checker's worker process: it runs work off the serving process and stops at once."""

from __future__ import annotations

import os
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from colibri.ui.checker import NICENESS, Checker

LONG_CHECK_S = 120.0


def started_then_sleeps(marker: str, seconds: float) -> None:
    """A long check that says when it has begun (run in the worker: a module-level function)."""
    # Written whole, then named: a marker that exists has its content (the test reads it at once).
    Path(marker).with_suffix(".writing").write_text(str(os.getpid()))
    os.replace(Path(marker).with_suffix(".writing"), marker)
    time.sleep(seconds)
    Path(marker).with_suffix(".finished").write_text("the check ran to its end")


def test_work_runs_in_a_niced_worker_and_shutdown_ends_a_long_check_at_once(tmp_path: Path) -> None:
    checker = Checker()
    marker = tmp_path / "started"
    try:
        worker = checker.submit(os.getpid).result(timeout=60)
        assert worker != os.getpid()
        assert checker.submit(os.nice, 0).result(timeout=30) == os.nice(0) + NICENESS
        long_check = checker.submit(started_then_sleeps, str(marker), LONG_CHECK_S)
        deadline = time.monotonic() + 60
        while not marker.exists():  # the worker has begun the check
            assert time.monotonic() < deadline, "the worker never began the long check"
            assert not long_check.done(), long_check
            time.sleep(0.02)  # polling a condition: the marker file
    finally:
        started = time.monotonic()
        checker.shutdown()
    # Waiting for the check would take LONG_CHECK_S: shutdown ended it instead.
    assert time.monotonic() - started < LONG_CHECK_S / 2, "shutdown waited for the check to finish"
    assert marker.read_text() == str(worker), "the check ran in the worker"
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)  # the worker is gone
    assert not marker.with_suffix(".finished").exists()
    # The check's future is answered (the worker broke off), so nothing waits on it for ever.
    assert isinstance(long_check.exception(timeout=10), BrokenProcessPool)
