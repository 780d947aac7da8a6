"""The background checker's worker process: it runs work off the serving process and stops at once."""

from __future__ import annotations

import os
import time
from concurrent.futures.process import BrokenProcessPool

import pytest

from colibri.ui.checker import NICENESS, Checker


def test_work_runs_in_a_niced_worker_and_shutdown_ends_a_long_check_at_once() -> None:
    checker = Checker()
    try:
        worker = checker.submit(os.getpid).result(timeout=60)
        assert worker != os.getpid()
        assert checker.submit(os.nice, 0).result(timeout=30) == os.nice(0) + NICENESS
        long_check = checker.submit(time.sleep, 120)
        time.sleep(0.5)  # let it start
    finally:
        started = time.monotonic()
        checker.shutdown()
    assert time.monotonic() - started < 10, "shutdown waited for the check to finish"
    with pytest.raises(ProcessLookupError):
        os.kill(worker, 0)  # the worker is gone
    # The check's future is answered (the worker broke off), so nothing waits on it for ever.
    assert isinstance(long_check.exception(timeout=10), BrokenProcessPool)
