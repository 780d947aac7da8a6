"""WAL checkpoints in a background thread, so no tool call pays for one.

SQLite's automatic checkpoint runs inside whichever commit crosses the threshold and, at
synchronous=NORMAL, fsyncs the database file there: a 5-15 ms stall every few hundred
calls (measured with bench/bench_core.py). The serving connection turns it off and this
thread runs PASSIVE checkpoints on its own connection instead; PASSIVE never blocks a
writer, and sqlite3 releases the GIL while it copies and syncs.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger("colibri.storage")

INTERVAL_S = 0.5


class Checkpointer:
    def __init__(self, path: Path, interval_s: float = INTERVAL_S) -> None:
        self._path = path
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="colibri-checkpointer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA busy_timeout = 1000")
            while not self._stop.wait(self._interval_s):
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error as exc:
                    # A checkpoint is an optimisation: the next one (or the close) catches up.
                    log.warning("background WAL checkpoint failed: %s", exc)
        finally:
            conn.close()
