"""`colibri ui` pages over a large store: 10,000 tasks, 1,000,000 thought records, 200,000 actions.

The store is built by direct inserts (a valid chain: bench_trail's builder, real hashes; the
verifiable log over every record and call with its stored tree and a signed checkpoint), then
`colibri ui --no-auth` serves it as a subprocess and each page is fetched over HTTP, warm, a
number of times; the target (SPEC §14, issue 27) is every page's p95 <= 250 ms, measured alone.
The /trail overview's integrity pass over the whole chain runs in the background meanwhile, as
it would for a lead watching the store. As a baseline from the same run, the login form (no
database) is fetched too.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path

from bench.bench_trail import build_database
from bench.common import line, percentile
from bench.procs import free_port
from colibri.core.cursor import encode_cursor
from colibri.core.merkle import leaf_hash, node_hash
from colibri.domains.log.entries import action_entry
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import Signer
from colibri.domains.log.tree import node_id
from colibri.storage import Connection, SQLiteDatabase

TARGET_MS = 250
TASKS = 10_000
ACTIONS = 200_000
FETCHES = 15
STATUSES = ("todo", "in_progress", "blocked", "review", "done", "cancelled")
TOOLS = ("task_create", "task_update", "thought_record", "task_list", "server_ping")


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="colibri-bench-ui-"))
    try:
        db_path = workdir / "ui.db"
        started = time.perf_counter()
        build_database(db_path)
        add_tasks_and_actions(db_path)
        add_log(db_path)
        print(f"(built the store in {time.perf_counter() - started:.1f} s)", flush=True)
        measure_pages(db_path, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def add_tasks_and_actions(path: Path) -> None:
    rng = random.Random(16)
    db = SQLiteDatabase.open(path)
    try:
        with db.atomic() as conn:
            now = "2026-01-01T00:00:00.000000Z"
            conn.executemany(
                "INSERT INTO tasks (number, id, title, description, status, priority, assignee, tags,"
                " created_at, updated_at, version) VALUES (?, ?, ?, '', ?, ?, ?, ?, ?, ?, 1)",
                [
                    (
                        n,
                        f"T-{n}",
                        f"task number {n}",
                        rng.choice(STATUSES),
                        rng.choice(("critical", "high", "medium", "low")),
                        rng.choice((None, "ana", "bo", "chen")),
                        json.dumps(rng.sample(["db", "ui", "api", "docs"], k=rng.randint(0, 2))),
                        now,
                        now,
                    )
                    for n in range(1, TASKS + 1)
                ],
            )
            conn.executemany(
                "INSERT INTO task_dependencies (task_id, depends_on, position) VALUES (?, ?, 0)",
                [(f"T-{n}", f"T-{rng.randint(1, n - 1)}") for n in range(2, TASKS + 1) if n % 3 == 0],
            )
            conn.executemany(
                "INSERT INTO task_history (task_id, version, event, changed_at, changes, principal)"
                " VALUES (?, 1, 'created', ?, ?, ?)",
                [
                    (f"T-{n}", now, json.dumps({"title": {"from": None, "to": f"task number {n}"}}), "ana")
                    for n in range(1, TASKS + 1)
                ],
            )
            # Calls after the records were written (bench_trail stamps them all at once), 10 ms apart.
            start = datetime.fromisoformat(
                conn.execute("SELECT max(created_at) FROM thought_records").fetchone()[0]
            )
            conn.executemany(
                "INSERT INTO actions (correlation_id, tool, arguments, outcome, result_hash, started_at,"
                " duration_ms, principal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        f"c{n}",
                        rng.choice(TOOLS),
                        json.dumps({"task_id": f"T-{n % TASKS + 1}", "note": "x" * rng.randint(0, 400)}),
                        "ok" if n % 50 else "error",
                        hashlib.sha256(str(n).encode()).hexdigest(),
                        (start + timedelta(seconds=1 + n / 100)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                        rng.random() * 5,
                        rng.choice(("local", "ana", "ci")),
                    )
                    for n in range(ACTIONS)
                ],
            )
    finally:
        db.close()


def add_log(path: Path) -> None:
    """The verifiable log over every record, then every call (as adoption orders them), its stored
    tree (tree.append's nodes, computed here in one pass) and a signed checkpoint over it all."""
    db = SQLiteDatabase.open(path)
    try:
        with db.atomic() as conn:
            entries = _entries(conn)
            frontier: list[bytes] = []
            nodes = []
            for index, (_, _, entry) in enumerate(entries):
                digest, level, position = leaf_hash(entry), 0, index
                while position & 1:
                    digest = node_hash(frontier.pop(), digest)
                    level, position = level + 1, position >> 1
                    nodes.append((node_id(level, position), digest))
                frontier.append(digest)
            conn.executemany(
                "INSERT INTO log_entries (idx, kind, ref, entry_hash) VALUES (?, ?, ?, ?)",
                ((index, kind, ref, entry) for index, (kind, ref, entry) in enumerate(entries)),
            )
            conn.executemany("INSERT INTO log_nodes (id, hash) VALUES (?, ?)", nodes)
            conn.execute("UPDATE log_meta SET adopted = 1 WHERE id = 1")
            Notary(Signer.generate("bench.example/colibri")).make(conn, "on-demand")
    finally:
        db.close()


def _entries(conn: Connection) -> list[tuple[str, int, bytes]]:
    records = conn.tuples("SELECT seq, hash FROM thought_records ORDER BY seq").fetchall()
    actions = conn.tuples(
        "SELECT sequence_no, correlation_id, tool, principal, arguments, outcome, result_hash, started_at,"
        " duration_ms FROM actions ORDER BY sequence_no"
    ).fetchall()
    return [("record", seq, bytes.fromhex(digest)) for seq, digest in records] + [
        ("action", row[0], action_entry(*row)) for row in actions
    ]


def measure_pages(db_path: Path, workdir: Path) -> None:
    port = free_port()
    env = {"COLIBRI_DB_PATH": str(db_path), "COLIBRI_LOG_LEVEL": "warn", "PATH": "/usr/bin:/bin"}
    log = (workdir / "ui.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "colibri", "ui", "--http", f"127.0.0.1:{port}", "--no-auth"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(base)
        pages = {
            "login form (no database; baseline)": "/login",
            "board": "/",
            "board, a later page of todo": f"/?after_todo={encode_cursor(5_000)}",
            "task T-9999 (history, records)": "/tasks/T-9999",
            "trail sessions": "/trail",
            "trail: 100,000-record open session": "/trail/bench-big",
            "trail: sealed session, later page": f"/trail/bench-00?after={encode_cursor(500_000)}",
            "trail: records of one kind": "/trail/bench-big?kind=decision",
            "audit": "/audit",
            "audit filtered (tool, principal, outcome)": (
                "/audit?tool=task_update&principal=ana&outcome=error"
            ),
            "audit, an older page": "/audit?before=100000",
            "board filtered by assignee": "/?assignee=ana",
            "board filtered by tag and assignee": "/?tag=db&assignee=bo",
            "board filtered by text": "/?text=number%2099",
            "a call opened to its proof (newest)": f"/audit/{ACTIONS}",
            "a call opened to its proof (middle)": f"/audit/{ACTIONS // 2}",
            "a call's proof, downloaded": f"/audit/{ACTIONS // 3}/proof.json",
        }
        worst = 0.0
        baseline = statistics.median(_fetch(base + "/login") for _ in range(FETCHES))
        for name, path in pages.items():
            _fetch(base + path)  # warm: the first read of a cold page cache is not the page's cost
            samples = [_fetch(base + path) for _ in range(FETCHES)]
            worst = max(worst, percentile(samples, 95))
            line(f"{name}: median", statistics.median(samples) * 1000, "ms")
            line(f"{name}: p95", percentile(samples, 95) * 1000, "ms", f"<= {TARGET_MS} ms")
        line("slowest page p95 / login form median", worst / baseline, "x")
        line("slowest page p95", worst * 1000, "ms", f"<= {TARGET_MS} ms")
    finally:
        process.terminate()
        process.wait(20)
        log.close()


def _fetch(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=30) as response:
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{url} answered {response.status}")
    return time.perf_counter() - started


def _wait(base: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            _fetch(base + "/login")
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
