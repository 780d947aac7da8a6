"""Round trips a PostgreSQL write transaction waits for, counted on the wire (SPEC §25).

`bench postgres` reports round trips per call from bench/latency_proxy.py, which reads the
frontend protocol a client sends and counts each Sync, Flush and simple Query: the messages after
which the client waits for the server. Here the same proxy stands between a store and its server,
so the count is checked against transactions whose waits are known, and the store's pipelining
(storage/postgres/database.py) is checked by that count.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from colibri.storage import Database, open_database
from tests.helpers import postgres as pg

ROOT = Path(__file__).resolve().parents[2]


class Proxy:
    def __init__(self, server_port: int, listen_port: int) -> None:
        self.port = listen_port
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.latency_proxy", str(listen_port), str(server_port), "0"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"

    def waits(self) -> list[int]:
        """Waits so far of each connection, in the order they opened."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        counts = dict(pair.split("=") for pair in self.process.stdout.readline().split())
        return [int(n) for n in counts["waits"].split(",")]


@pytest.fixture
def through_proxy(postgres_server: pg.PostgresServer) -> Iterator[tuple[Database, Proxy]]:
    url = postgres_server.new_database()
    proxy = Proxy(postgres_server.port, pg._free_port())
    db = open_database(url.replace(f":{postgres_server.port}/", f":{proxy.port}/"))
    try:
        yield db, proxy
    finally:
        db.close()
        proxy.process.terminate()
        proxy.process.communicate(timeout=10)  # and close its pipes


def _waited(proxy: Proxy, before: list[int]) -> int:
    (now,) = proxy.waits()  # the store's one connection
    return now - before[0]


def test_a_write_transaction_waits_once_per_read_and_once_to_commit(
    through_proxy: tuple[Database, Proxy],
) -> None:
    db, proxy = through_proxy
    touch = "UPDATE log_meta SET adopted = adopted WHERE id = 1"

    before = proxy.waits()
    with db.atomic() as conn:
        for _ in range(5):
            conn.execute(touch)
    assert _waited(proxy, before) == 1  # BEGIN, the lock, five statements and COMMIT: one Sync

    before = proxy.waits()
    with db.atomic() as conn:
        conn.execute(touch)
        assert conn.execute("SELECT adopted FROM log_meta WHERE id = 1").fetchone() is not None
        conn.execute(touch)
    assert _waited(proxy, before) == 2  # the read's Flush, then COMMIT's Sync

    before = proxy.waits()
    for _ in range(3):  # outside a transaction every statement is a round trip of its own
        db.execute("SELECT 1").fetchone()
    assert _waited(proxy, before) == 3
