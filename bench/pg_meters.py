"""What `bench postgres` reads during a timed window, and the scale-out model it prints.

CPU comes from `/proc/PID/stat` (utime + stime, all threads of the process): the replicas'
`colibri serve` processes, and PostgreSQL's postmaster with every process it started (the
backends serving the replicas, the WAL writer, the checkpointer, ...). A process that starts
during a window counts whole; one that ends during it loses what it spent (none does: the
replicas connect before the window opens).

The model (printed by `model`, explained in docs/explanation/scaling.md), from one replica's
measured window on PostgreSQL:

    s_r  = a replica's CPU per call (seconds)           -> calls/s per core of a replica = 1 / s_r
    s_pg = PostgreSQL's CPU per call (seconds)
    X(R, C) = min(R, C) / s_r                            R replicas on C cores of their own
    PostgreSQL then needs X(R, C) * s_pg cores on its machine.
    Everything on one machine of C cores, with the load's clients (CPU s_c per call) on it too:
    X = min(R / s_r, C / (s_r + s_pg + s_c)).

A replica is one Python process and uses at most about one core (its event loop and its chain
worker share one interpreter lock), hence min(R, C). The model leaves out the cross-replica write
lock: a batch holds it for its round trips and its calls' work under the lock, which bounds the
whole store at 1 / (lock held per call); the bench's measured 1, 2 and 4 replicas on this machine
are printed beside the model's prediction for the same machine, so where the lock (or anything
else the model leaves out) bites shows as the difference.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from bench.common import line
from bench.procs import cpu_seconds

REPLICAS = (1, 2, 4, 8)
CORES = (2, 8, 32)


class CpuMeter:
    """CPU the processes `pids()` names spent between `open` and `close`."""

    def __init__(self, pids: Callable[[], Iterable[int]]) -> None:
        self._pids = pids
        self._before: dict[int, float] = {}
        self.seconds = 0.0

    def open(self) -> None:
        self._before = {pid: cpu_seconds(pid) for pid in self._pids()}

    def close(self) -> None:
        now = {pid: cpu_seconds(pid) for pid in self._pids()}
        self.seconds = sum(spent - self._before.get(pid, 0.0) for pid, spent in now.items())


def predicted(replicas: int, cores: int, replica_s: float, postgres_s: float) -> tuple[float, float]:
    """(calls/s of `replicas` on `cores` of their own, PostgreSQL's cores at that rate)."""
    rate = min(replicas, cores) / replica_s
    return rate, rate * postgres_s


def on_one_machine(replicas: int, cores: int, replica_s: float, shared_s: float) -> float:
    """Calls/s with the replicas sharing `cores` with whatever else costs `shared_s` a call."""
    return min(replicas / replica_s, cores / (replica_s + shared_s))


def model(replica_s: float, postgres_s: float, clients_s: float, measured: dict[int, float]) -> None:
    """Print the scale-out model from one replica's CPU per call, PostgreSQL's and the clients'."""
    cores_here = os.cpu_count() or 1
    print("scale-out model (docs/explanation/scaling.md), from this run's 1-replica figures:", flush=True)
    line("  calls/s per core of a replica (1 / s_r)", 1 / replica_s, "calls/s")
    line("  PostgreSQL's CPU per call (s_pg)", postgres_s * 1000, "ms")
    print("  predicted calls/s, R replicas on C cores of their own (PostgreSQL's cores needed):")
    print(" " * 8 + "".join(f"{'C=' + str(cores):>20}" for cores in CORES))
    for count in REPLICAS:
        cells = []
        for cores in CORES:
            rate, needed = predicted(count, cores, replica_s, postgres_s)
            cells.append(f"{rate:>11,.0f} ({needed:>4.1f})")
        print(f"  {'R=' + str(count):<6}" + "".join(f"{cell:>20}" for cell in cells), flush=True)
    print(f"  this machine ({cores_here} cores shared with PostgreSQL and the clients; load average")
    print(f"  {os.getloadavg()[0]:.2f}, other work on it not modelled), model against measured:")
    for count, rate in sorted(measured.items()):
        expected = on_one_machine(count, cores_here, replica_s, postgres_s + clients_s)
        print(f"    R={count}: model {expected:,.0f} calls/s, measured {rate:,.0f} calls/s", flush=True)
