"""Part of `python -m bench log` (bench_log.py runs it on its million-entry store): tiles served
by `colibri serve --http` and round trips to a `colibri witness serve`.

Tiles: random full level-0 tiles, entry bundles and level-1 tiles, fetched one after another by
one keep-alive client. Witness: checkpoints of a growing size (every 1,000 entries), each posted
with its consistency proof from the previous one and answered with a cosignature.
"""

from __future__ import annotations

import base64
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

from bench.common import line, percentile
from bench.procs import free_port
from colibri.domains.log import tree
from colibri.domains.log.checkpoint import Checkpoint
from colibri.domains.log.cosignature import parse_cosigner_key, timestamp_of
from colibri.domains.log.notary import default_origin
from colibri.domains.log.note import ALG_COSIGNATURE, Signer, sign
from colibri.storage import SQLiteDatabase

TILES = 3_000
ROUND_TRIPS = 300
STEP = 1_000


def tiles_and_witness(workdir: Path, db_path: Path, signer: Signer) -> None:
    key_file = workdir / "tiles.key"
    key_file.write_text(signer.key() + "\n")
    env = {**os.environ, "COLIBRI_DB_PATH": str(db_path), "COLIBRI_SIGNING_KEY": str(key_file)}
    port = free_port()
    with _process(
        [sys.executable, "-m", "colibri", "serve", "--http", f"127.0.0.1:{port}", "--no-auth"], env, port
    ):
        tile_rate(f"http://127.0.0.1:{port}/log", tree_size(db_path))
    cosigner = Signer.generate("bench.example/witness", ALG_COSIGNATURE)
    (workdir / "witness.key").write_text(cosigner.key() + "\n")
    origin = _origin(db_path)
    port = free_port()
    command = [sys.executable, "-m", "colibri", "witness", "serve", "--http", f"127.0.0.1:{port}"]
    command += ["--key", str(workdir / "witness.key"), "--db", str(workdir / "witness.db")]
    command += ["--log", f"{origin} {signer.verifier().key()}"]
    with _process(command, env, port):
        witness_round_trips(f"http://127.0.0.1:{port}", db_path, signer, cosigner, origin)


def tree_size(db_path: Path) -> int:
    db = SQLiteDatabase.open(db_path, readonly=True)
    try:
        return tree.size(db)
    finally:
        db.close()


def tile_rate(base: str, size: int) -> None:
    rng = random.Random(7)
    full = size // 256
    paths = []
    for _ in range(TILES):
        kind = rng.randrange(3)
        if kind == 0:
            paths.append(f"tile/0/{_path(rng.randrange(full))}")
        elif kind == 1:
            paths.append(f"tile/entries/{_path(rng.randrange(full))}")
        else:
            paths.append(f"tile/1/{_path(rng.randrange(max(1, full // 256)))}")
    with httpx2.Client(timeout=30) as client:
        _wait_until_ready(client, base.removesuffix("/log"))
        checkpoint = client.get(f"{base}/checkpoint")
        if checkpoint.status_code != 200:
            raise RuntimeError(f"serve --http has no checkpoint to serve tiles under: {checkpoint.text}")
        started = time.perf_counter()
        for path in paths:
            answer = client.get(f"{base}/{path}")
            if answer.status_code != 200:
                raise RuntimeError(f"GET {path}: {answer.status_code} {answer.text}")
        elapsed = time.perf_counter() - started
    line("tlog-tiles served (levels 0, 1, entries; one client)", TILES / elapsed, "tiles/s")


def _wait_until_ready(client: httpx2.Client, base: str) -> None:
    """Tiles are read from the store once phase 2 has opened it (migrated, the log adopted)."""
    deadline = time.monotonic() + 300
    while (answer := client.get(f"{base}/readyz")).status_code != 200:
        if time.monotonic() > deadline:
            raise RuntimeError(f"serve --http never became ready: {answer.text}")
        time.sleep(0.2)


def witness_round_trips(base: str, db_path: Path, signer: Signer, cosigner: Signer, origin: str) -> None:
    db = SQLiteDatabase.open(db_path, readonly=True)
    key = parse_cosigner_key(cosigner.verifier().key())
    times = []
    try:
        with httpx2.Client(timeout=30) as client, db.snapshot() as conn:
            old = 0
            last = min(STEP * ROUND_TRIPS, tree.size(conn))
            for size in range(STEP, last + 1, STEP):
                note = sign(Checkpoint(origin, size, tree.root(conn, size)).body(), signer)
                proof = tree.consistency_proof(conn, old, size) if old else []
                body = (
                    f"old {old}\n" + "".join(base64.b64encode(n).decode() + "\n" for n in proof) + "\n" + note
                )
                started = time.perf_counter()
                answer = client.post(f"{base}/add-checkpoint", content=body.encode())
                times.append(time.perf_counter() - started)
                if answer.status_code != 200 or timestamp_of(note + answer.text, key) is None:
                    raise RuntimeError(f"the witness answered {answer.status_code}: {answer.text}")
                old = size
    finally:
        db.close()
    line("witness round trip (add-checkpoint, proof, cosign), median", statistics.median(times) * 1000, "ms")
    line("witness round trip, p99", percentile(times, 99) * 1000, "ms")
    line("witness round trips/s (one client)", len(times) / sum(times), "round trips/s")


def _origin(db_path: Path) -> str:
    db = SQLiteDatabase.open(db_path, readonly=True)
    try:
        return default_origin(db)
    finally:
        db.close()


def _path(index: int) -> str:
    groups = [f"{index % 1000:03d}"]
    while index >= 1000:
        index //= 1000
        groups.append(f"x{index % 1000:03d}")
    return "/".join(reversed(groups))


@contextmanager
def _process(command: list[str], env: dict[str, str], port: int) -> Iterator[None]:
    devnull = subprocess.DEVNULL
    process = subprocess.Popen(command, env=env, stdin=devnull, stdout=devnull, stderr=devnull)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command[3:5]} did not start (exit {process.poll()})")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
