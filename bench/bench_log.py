"""The verifiable log: thought_record over stdio with the log on vs the bare echo server, and, at
1,000,000 entries, a checkpoint, an inclusion and a consistency proof,
`colibri verify --checkpoint` end to end, tiles served by `serve --http` (tiles/s, one client,
keep-alive) and round trips to a `colibri witness serve` (log_witness.py).

The million entries are written here in bulk (half thought records with real chained hashes,
half finished calls with real JCS entry hashes, alternating as the server writes them), with
the tree's stored nodes computed in one streaming pass, exactly as appends would leave them.
"""

from __future__ import annotations

import hashlib
import random
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
from colibri.domains.log import notary as log_notary
from colibri.domains.log import tree
from colibri.domains.log.entries import action_entry
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import Signer
from colibri.domains.trail.canonical import GENESIS_HASH, record_json
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS

ENTRIES = 1_000_000
STDIO_CALLS = 1_000
ROUNDS = 5
SAMPLES = 2_000
_BATCH = 50_000


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="colibri-bench-log-"))
    try:
        stdio_ratio(workdir)
        db_path = workdir / "million.db"
        started = time.perf_counter()
        build_log(db_path, ENTRIES)
        print(f"(built {ENTRIES:,} log entries in {time.perf_counter() - started:.1f} s)", flush=True)
        signer = Signer.generate("bench.example/colibri")
        note = checkpoint_and_proofs(db_path, signer)
        verify_rate(workdir, db_path, note, signer)
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
    """`count` entries, alternating a chained record and a finished call, with their tree."""
    db = SQLiteDatabase.open(path)
    try:
        migrate(db, MIGRATIONS)
        with db.atomic() as conn:
            conn.execute(
                "INSERT INTO audit_sessions (session_id, started_at) VALUES ('bench', ?)", (utc_now(),)
            )
            conn.execute("UPDATE log_meta SET adopted = 1")
            rng = random.Random(13)
            sha = hashlib.sha256
            prev, created = GENESIS_HASH, utc_now()
            frontier: list[tuple[int, bytes]] = []
            records, actions, entries, nodes = [], [], [], []
            for index in range(count):
                number = index // 2 + 1
                if index % 2 == 0:
                    content = f"decision {number}: " + " ".join(
                        rng.choices(("a", "log", "entry", "proof"), k=12)
                    )
                    text = record_json(number, "bench", "decision", content, None, "agent", created, prev)
                    digest = sha(text.encode()).hexdigest()
                    records.append(
                        (number, "bench", "decision", content, None, "agent", created, prev, digest)
                    )
                    prev, entry, kind = digest, bytes.fromhex(digest), tree.RECORD
                else:
                    correlation = str(uuid.UUID(int=rng.getrandbits(128)))
                    result = sha(str(number).encode()).hexdigest()
                    row = (
                        number,
                        correlation,
                        "thought_record",
                        '{"x":1}',
                        "ok",
                        result,
                        created,
                        rng.random() * 3,
                    )
                    actions.append(row)
                    entry = action_entry(
                        row[0], row[1], row[2], "local", row[3], row[4], row[5], row[6], row[7]
                    )
                    kind = tree.ACTION
                entries.append((index, kind, number, entry))
                level, digest_bytes, position = 0, sha(b"\x00" + entry).digest(), index
                while frontier and frontier[-1][0] == level:
                    digest_bytes = sha(b"\x01" + frontier.pop()[1] + digest_bytes).digest()
                    level, position = level + 1, position >> 1
                    nodes.append((tree.node_id(level, position), digest_bytes))
                frontier.append((level, digest_bytes))
                if len(entries) == _BATCH:
                    _flush(conn, records, actions, entries, nodes)
            _flush(conn, records, actions, entries, nodes)
            conn.execute("UPDATE trail_head SET seq = ?, hash = ? WHERE id = 1", ((count + 1) // 2, prev))
    finally:
        db.close()


def _flush(conn, records, actions, entries, nodes) -> None:  # type: ignore[no-untyped-def]
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
    conn.executemany("INSERT INTO log_entries (idx, kind, ref, entry_hash) VALUES (?, ?, ?, ?)", entries)
    conn.executemany("INSERT INTO log_nodes (id, hash) VALUES (?, ?)", nodes)
    for batch in (records, actions, entries, nodes):
        batch.clear()


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
        picks = iter([rng.randrange(size) for _ in range(SAMPLES)])
        inclusion = in_process(lambda: tree.inclusion_path(db, next(picks), size), SAMPLES)
        line("inclusion proof (1,000,000 entries), median", statistics.median(inclusion) * 1000, "ms")
        line("inclusion proof (1,000,000 entries), p99", percentile(inclusion, 99) * 1000, "ms", "<= 2 ms")
        olds = iter([rng.randrange(1, size) for _ in range(SAMPLES)])
        consistency = in_process(lambda: tree.consistency_proof(db, next(olds), size), SAMPLES)
        line("consistency proof (to 1,000,000 entries), median", statistics.median(consistency) * 1000, "ms")
        line(
            "consistency proof (to 1,000,000 entries), p99",
            percentile(consistency, 99) * 1000,
            "ms",
            "<= 2 ms",
        )
    finally:
        db.close()
    return note


def verify_rate(workdir: Path, db_path: Path, note: str, signer: Signer) -> None:
    """`colibri verify --checkpoint` end to end, twice (the first may read from disk)."""
    checkpoint = workdir / "million.checkpoint"
    checkpoint.write_text(note)
    rates = []
    for _ in range(2):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "colibri", "verify", "--db", str(db_path), "--checkpoint", str(checkpoint),
             "--key", signer.verifier().key()],
            check=False, capture_output=True, text=True,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"colibri verify --checkpoint failed: {done.stdout}{done.stderr}")
        rates.append(ENTRIES / elapsed)
    line("colibri verify --checkpoint (command), 1st run", rates[0], "entries/s")
    line("colibri verify --checkpoint (command), best", max(rates), "entries/s", ">= 300,000/s")
    # Reference from the same run: the plain chain check over the same file's 500,000 records.
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "colibri", "verify", "--db", str(db_path)], check=True, capture_output=True
    )
    chain_rate = ENTRIES / 2 / (time.perf_counter() - started)
    line("reference: colibri verify (chain only, 500,000 records)", chain_rate, "records/s")
