"""What the benchmarks read of the processes they start: CPU time from /proc, free ports, and
waiting until a server listens.

CPU is `/proc/PID/stat`'s utime + stime: every thread of the process, those that ended included.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import anyio

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process `pid` so far, in seconds (0 if it has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()  # after the command's name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15)


def tree_cpu_seconds(pid: int) -> float:
    """`cpu_seconds` of `pid` and of every process below it."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        total += cpu_seconds(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue  # a descendant that ended meanwhile: its time is in its parent's now
    return total


def children_of(parent: int) -> list[int]:
    """Pids whose parent is `parent`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended while listed
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            found.append(int(entry.name))
    return found


def postgres_pids(data: Path) -> Callable[[], list[int]]:
    """The postmaster of the cluster in `data` and its processes, as they are when called."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    return lambda: [postmaster, *children_of(postmaster)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _listening(port: int, process: subprocess.Popen[bytes], deadline: float) -> bool:
    if process.poll() is not None:
        raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        if time.monotonic() > deadline:
            raise RuntimeError(f"nothing listens on {port}") from None
        return False


def wait_listening_sync(port: int, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    """Until something listens on `port`; an error if `process` ends or `seconds` pass first."""
    deadline = time.monotonic() + seconds
    while not _listening(port, process, deadline):
        time.sleep(0.05)


async def wait_listening(port: int, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    """`wait_listening_sync` without holding up the event loop."""
    deadline = time.monotonic() + seconds
    while not _listening(port, process, deadline):
        await anyio.sleep(0.05)
