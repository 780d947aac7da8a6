"""The verifiable log: thought_record over stdio with the log on vs the bare echo server, and, at
1,000,000 entries, a checkpoint, an inclusion and a consistency proof,
`colibri verify --checkpoint` end to end, tiles served by `serve --http` (tiles/s, one client,
keep-alive) and round trips to a `colibri witness serve` (log_witness.py).

The million entries are written here (half thought records with real chained hashes, half
finished calls, alternating as the server writes them): the rows in bulk, the entries and the
tree through the store's own append path, a transaction per batch, in a temporary folder.
`colibri verify --checkpoint` and `--db` are timed as the real commands, each run printed; a
proof's p99 is measured through `colibri prove inclusion --timings` (inclusion_p99 says why).
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio

from bench.common import (
    colibri_params,
    echo_params,
    in_process,
    line,
    percentile,
    rate,
    sequential_calls,
    start_session,
)
from bench.log_witness import tiles_and_witness
from colibri.core.clock import utc_now
from colibri.core.database import Connection
from colibri.domains.log import notary as log_notary
from colibri.domains.log import tree
from colibri.domains.log.appends import log_action, log_record
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import Signer
from colibri.domains.trail.canonical import GENESIS_HASH, record_json
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS

# BENCH_LOG_SECTIONS picks the parts (stdio, verify, tiles); the million entries are SPEC §25's
# size, and BENCH_LOG_ENTRIES only makes a quick trial run smaller (its figures then mean nothing).
SECTIONS = os.environ.get("BENCH_LOG_SECTIONS", "stdio,verify,tiles").split(",")
ENTRIES = int(os.environ.get("BENCH_LOG_ENTRIES", "1000000"))
STDIO_CALLS = 1_000
ROUNDS = 5
VERIFY_RUNS = 3
SAMPLES = 2_000
_BATCH = 50_000
_TIMING = re.compile(r"inclusion \d+: ([0-9.]+) ms \(([0-9.]+) ms CPU\)")


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="colibri-bench-log-"))
    try:
        if "stdio" in SECTIONS:
            stdio_ratio(workdir)
        if not {"verify", "tiles"} & set(SECTIONS):
            return
        db_path = workdir / "million.db"
        started = time.perf_counter()
        build_log(db_path, ENTRIES)
        print(f"(built {ENTRIES:,} log entries in {time.perf_counter() - started:.1f} s)", flush=True)
        signer = Signer.generate("bench.example/colibri")
        if "verify" in SECTIONS:
            note = checkpoint_and_proofs(db_path, signer)
            inclusion_p99(db_path)
            verify_rate(workdir, db_path, note, signer)
        if "tiles" in SECTIONS:
            tiles_and_witness(workdir, db_path, signer)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def stdio_ratio(workdir: Path) -> None:
    """thought_record calls/s (two log entries each: the record and the finished call) against
    the bare SDK echo server, back to back in each round; ratios are medians over rounds."""

    async def measure() -> list[tuple[float, float]]:
        rounds = []
        for round_no in range(ROUNDS):
            db_path = workdir / f"stdio-{round_no}.db"
            session = start_session(db_path)
            args = {"session_id": session, "kind": "decision", "content": "a sentence of twenty words " * 4}
            echo = rate(await sequential_calls(echo_params(), "echo", {"x": 1}, STDIO_CALLS))
            params = colibri_params(db_path, COLIBRI_SIGNING_KEY=str(_key_file(workdir)))
            record = rate(await sequential_calls(params, "thought_record", args, STDIO_CALLS))
            rounds.append((echo, record))
        return rounds

    rounds = anyio.run(measure)
    line(
        "echo (bare SDK server) sequential calls/s, median",
        statistics.median(r[0] for r in rounds),
        "calls/s",
    )
    line("thought_record, log on, calls/s, median", statistics.median(r[1] for r in rounds), "calls/s")
    line("thought_record (log on) / echo", statistics.median(r[1] / r[0] for r in rounds), "x", ">= 0.80x")


def _key_file(workdir: Path) -> Path:
    path = workdir / "bench.key"
    if not path.exists():
        path.write_text(Signer.generate("bench.example/colibri").key() + "\n")
    return path


def build_log(path: Path, count: int) -> None:
    """`count` entries, alternating a chained record and a finished call: the rows written in bulk,
    each entry appended through the store's own append path (appends.py, tree.append), one
    transaction per batch of _BATCH entries."""
    db = SQLiteDatabase.open(path)
    try:
        migrate(db, MIGRATIONS)
        with db.atomic() as conn:
            conn.execute(
                "INSERT INTO audit_sessions (session_id, started_at) VALUES ('bench', ?)", (utc_now(),)
            )
            conn.execute("UPDATE log_meta SET adopted = 1")
        rng = random.Random(13)
        prev, created = GENESIS_HASH, utc_now()
        for lo in range(0, count, _BATCH):
            records: list[tuple[object, ...]] = []
            actions: list[tuple[object, ...]] = []
            for index in range(lo, min(lo + _BATCH, count)):
                number = index // 2 + 1
                if index % 2 == 0:
                    content = f"decision {number}: " + " ".join(
                        rng.choices(("a", "log", "entry", "proof"), k=12)
                    )
                    text = record_json(number, "bench", "decision", content, None, "agent", created, prev)
                    digest = hashlib.sha256(text.encode()).hexdigest()
                    records.append(
                        (number, "bench", "decision", content, None, "agent", created, prev, digest)
                    )
                    prev = digest
                else:
                    correlation = str(uuid.UUID(int=rng.getrandbits(128)))
                    result = hashlib.sha256(str(number).encode()).hexdigest()
                    duration = rng.random() * 3
                    actions.append(
                        (number, correlation, "thought_record", '{"x":1}', "ok", result, created, duration)
                    )
            with db.atomic() as conn:
                _append(conn, records, actions)
        with db.atomic() as conn:
            conn.execute("UPDATE trail_head SET seq = ?, hash = ? WHERE id = 1", ((count + 1) // 2, prev))
    finally:
        db.close()


def _append(conn: Connection, records: list[tuple[object, ...]], actions: list[tuple[object, ...]]) -> None:
    """The rows, then their entries in the order the server writes them (record, call, record...)."""
    conn.executemany(
        "INSERT INTO thought_records (seq, session_id, kind, content, task_id, agent_id, created_at,"
        " prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        records,
    )
    conn.executemany(
        "INSERT INTO actions (sequence_no, correlation_id, tool, arguments, outcome, result_hash, started_at,"
        " duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        actions,
    )
    for position, record in enumerate(records):
        log_record(conn, record[0], record[8])  # type: ignore[arg-type]
        if position < len(actions):
            log_action(conn, *actions[position])  # type: ignore[arg-type]


def checkpoint_and_proofs(db_path: Path, signer: Signer) -> str:
    """Checkpoints, inclusion and consistency proofs at 1,000,000 entries, in process."""
    db = SQLiteDatabase.open(db_path)
    notary = Notary(signer)
    try:
        times = []
        note = ""
        for _ in range(20):
            started = time.perf_counter()
            with db.atomic() as conn:
                note = notary.make(conn, log_notary.ON_DEMAND).note
            times.append(time.perf_counter() - started)
        line("checkpoint at 1,000,000 entries (sign + store), median", statistics.median(times) * 1000, "ms")
        line("checkpoint at 1,000,000 entries, worst of 20", max(times) * 1000, "ms", "<= 50 ms")
        rng = random.Random(5)
        size = tree.size(db)
        olds = iter([rng.randrange(1, size) for _ in range(SAMPLES)])
        consistency = in_process(lambda: tree.consistency_proof(db, next(olds), size), SAMPLES)
        line("reference: consistency proof in process, p99", percentile(consistency, 99) * 1000, "ms")
    finally:
        db.close()
    return note


def inclusion_p99(db_path: Path) -> None:
    """SPEC §25: a proof's p99 through `colibri prove`. A process start (~0.3 s) per proof would
    measure Python's start, not the proof, so one `colibri prove inclusion` proves SAMPLES random
    entries and reports each proof's own time (--timings: its reads and hashing)."""
    rng = random.Random(5)
    picks = [str(rng.randrange(ENTRIES)) for _ in range(SAMPLES)]
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "prove", "inclusion", *picks, "--db", str(db_path), "--timings"],
        check=False, capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"colibri prove inclusion failed: {done.stderr}")
    timed = [_TIMING.fullmatch(row) for row in done.stderr.splitlines()]
    times = [(float(match[1]), float(match[2])) for match in timed if match]
    if len(times) != SAMPLES or len(done.stdout.splitlines()) != SAMPLES:
        raise RuntimeError(f"colibri prove inclusion printed {len(times)} timings for {SAMPLES} proofs")
    wall, cpu = [t[0] for t in times], [t[1] for t in times]
    line("inclusion proof via colibri prove (1,000,000), median", statistics.median(wall), "ms")
    line("inclusion proof via colibri prove (1,000,000), p99", percentile(wall, 99), "ms", "<= 2")
    line("inclusion proof via colibri prove, CPU time, p99", percentile(cpu, 99), "ms")


def verify_rate(workdir: Path, db_path: Path, note: str, signer: Signer) -> None:
    """The real `colibri verify` processes, timed whole: --checkpoint (the log alone, the store
    named by the environment) and --db (chain, seals, each entry re-derived from its row), each
    VERIFY_RUNS times; every run is printed, and the median is what the target judges."""
    checkpoint = workdir / "million.checkpoint"
    checkpoint.write_text(note)
    key = signer.verifier().key()
    env = {**os.environ, "COLIBRI_DB_PATH": str(db_path)}
    env.pop("COLIBRI_DB_URL", None)
    log_only = ["verify", "--checkpoint", str(checkpoint), "--key", key]
    for label, args, target in (
        ("colibri verify --checkpoint (log alone)", log_only, ">= 300,000/s"),
        ("colibri verify --db (chain, seals, rows)", ["verify", "--db", str(db_path)], ""),
    ):
        rates, per_cpu = [], []
        for run in range(VERIFY_RUNS):
            cpu_before, started = _children_cpu(), time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "colibri", *args], check=False, capture_output=True, text=True, env=env
            )
            elapsed, cpu = time.perf_counter() - started, _children_cpu() - cpu_before
            if done.returncode != 0:
                raise RuntimeError(f"colibri {' '.join(args[:2])} failed: {done.stdout}{done.stderr}")
            rates.append(ENTRIES / elapsed)
            per_cpu.append(ENTRIES / cpu)
            line(f"{label}, run {run + 1}", rates[-1], "entries/s")
        line(f"{label}, median of {VERIFY_RUNS}", statistics.median(rates), "entries/s", target)
        # What a loaded machine does not change: the command's CPU (its workers' included) per entry.
        line(f"{label}, median per CPU-second", statistics.median(per_cpu), "entries/s")


def _children_cpu() -> float:
    """User and system CPU seconds of this process's finished children and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
