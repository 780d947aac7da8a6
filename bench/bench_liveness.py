"""Liveness under a long call: server_ping latency while audit_verify_chain checks 1,000,000 records.

Handlers run in a worker thread under the chain lock (SPEC §8), so a ping that arrives during a
long verification is answered on the event loop at once. The baseline is the same ping on the
same server while it is idle, measured in the same run; the ratio is what the long call costs a
concurrent ping. `COLIBRI_BENCH_RECORDS` makes the database smaller for a quick look.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from bench.common import colibri_params, line, percentile
from colibri.domains.trail.canonical import GENESIS_HASH, record_json
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS

RECORDS = int(os.environ.get("COLIBRI_BENCH_RECORDS", "1000000"))
IDLE_PINGS = 300
PING_EVERY_S = 0.02


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="colibri-bench-liveness-"))
    try:
        db_path = workdir / "trail.db"
        started = time.perf_counter()
        _build(db_path, RECORDS)
        print(f"(built {RECORDS:,} records in {time.perf_counter() - started:.1f} s)", flush=True)
        idle, busy, verify_s = anyio.run(_measure, db_path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    line("server_ping while idle, median", statistics.median(idle) * 1000, "ms")
    line(f"audit_verify_chain over {RECORDS:,} records", verify_s, "s")
    line("server_ping during the verification, count", len(busy), "pings")
    if not busy:
        print("(the verification ended before the first ping: use more records)")
        return
    line("server_ping during the verification, median", statistics.median(busy) * 1000, "ms")
    line("server_ping during the verification, p99", percentile(busy, 99) * 1000, "ms", "< 100 ms")
    line("server_ping during the verification, max", max(busy) * 1000, "ms")
    line("median during / median idle", statistics.median(busy) / statistics.median(idle), "x")


async def _measure(db_path: Path) -> tuple[list[float], list[float], float]:
    async with Client(colibri_params(db_path), mode="legacy", read_timeout_seconds=600) as client:
        await client.list_tools()
        await _until_full(client)
        idle = [await _ping(client) for _ in range(IDLE_PINGS)]
        busy: list[float] = []
        done = anyio.Event()
        verify_s = 0.0

        async def verify() -> None:
            nonlocal verify_s
            started = time.perf_counter()
            result = await client.call_tool("audit_verify_chain", {})
            verify_s = time.perf_counter() - started
            if result.is_error or not (result.structured_content or {}).get("data", {}).get("valid"):
                raise RuntimeError(f"the benchmark chain did not verify: {result.content}")
            done.set()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(verify)
            await anyio.sleep(0.2)
            while not done.is_set():
                latency = await _ping(client)
                if not done.is_set():
                    busy.append(latency)
                await anyio.sleep(PING_EVERY_S)
    return idle, busy, verify_s


async def _until_full(client: Client, limit_s: float = 600.0) -> None:
    """Wait for the boot to end: the first open logs the records this benchmark inserted into
    the verifiable log (SPEC §11), and until then only ping and health are admitted."""
    started = time.perf_counter()
    while True:
        result = await client.call_tool("server_health", {})
        health = (result.structured_content or {}).get("data", {})
        phase, mode = health.get("phase"), health.get("mode")
        if phase == "phase2" and mode == "FULL":
            print(f"(the server booted to FULL in {time.perf_counter() - started:.1f} s)", flush=True)
            return
        if time.perf_counter() - started > limit_s:
            raise RuntimeError(f"the server is in {phase}, mode {mode} after {limit_s:g} s: {result.content}")
        await anyio.sleep(0.1)


async def _ping(client: Client) -> float:
    started = time.perf_counter()
    result = await client.call_tool("server_ping", {})
    if result.is_error:
        raise RuntimeError(f"server_ping failed: {result.content}")
    return time.perf_counter() - started


def _build(path: Path, records: int) -> None:
    """A migrated database with one session of `records` chained records, inserted in bulk."""
    db = SQLiteDatabase.open(path)
    try:
        migrate(db, MIGRATIONS)
        created_at = "2026-01-01T00:00:00.000000Z"
        with db.atomic() as conn:
            conn.execute(
                "INSERT INTO audit_sessions (session_id, started_at) VALUES ('bench', ?)", (created_at,)
            )
            prev, batch = GENESIS_HASH, []
            for seq in range(1, records + 1):
                content = f"observation {seq}: the chain records every decision with its reason"
                text = record_json(seq, "bench", "observation", content, None, "bench", created_at, prev)
                digest = hashlib.sha256(text.encode()).hexdigest()
                batch.append((seq, content, created_at, prev, digest))
                prev = digest
                if len(batch) == 50_000 or seq == records:
                    conn.executemany(
                        "INSERT INTO thought_records (seq, session_id, kind, content, agent_id, created_at,"
                        " prev_hash, hash) VALUES (?, 'bench', 'observation', ?, 'bench', ?, ?, ?)",
                        batch,
                    )
                    batch = []
            conn.execute("UPDATE trail_head SET seq = ?, hash = ? WHERE id = 1", (records, prev))
    finally:
        db.close()
