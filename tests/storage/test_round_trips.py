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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from colibri.chain.pipeline import Chain, Reply
from colibri.core.modes import Mode
from colibri.core.state import ServerState
from colibri.domains import proofs, trail
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


@pytest.fixture
def open_second(
    postgres_server: pg.PostgresServer, through_proxy: tuple[Database, Proxy]
) -> Iterator[Callable[[], Database]]:
    """Another replica's connection to the proxied store, straight to the server."""
    db, proxy = through_proxy
    opened: list[Database] = []

    def open_() -> Database:
        opened.append(open_database(db.target.replace(f":{proxy.port}/", f":{postgres_server.port}/")))
        return opened[-1]

    yield open_
    for second in opened:
        second.close()


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


def _chain(db: Database) -> Chain:
    state = ServerState(version="t", declared_mode=Mode.FULL, phase="phase2", mode=Mode.FULL, db=db)
    return Chain({tool.name: tool for tool in (*trail.TOOLS, *proofs.TOOLS)}, state)


async def _session(chain: Chain) -> str:
    reply = await chain.run("audit_session_start", {})
    session_id: str = reply.envelope["data"]["session_id"]
    return session_id


async def _together(chain: Chain, calls: list[dict[str, Any]]) -> list[Reply]:
    """thought_record calls that all wait for the chain's lock at once, so they run as one batch."""
    replies: list[Reply | None] = [None] * len(calls)

    async def one(index: int) -> None:
        replies[index] = await chain.run("thought_record", calls[index])

    async with anyio.create_task_group() as tasks, chain.lock:
        for index in range(len(calls)):
            tasks.start_soon(one, index)
        with anyio.fail_after(10):
            while chain.lock.statistics().tasks_waiting < len(calls):
                await anyio.sleep(0.01)
    return [reply for reply in replies if reply is not None]


@pytest.mark.anyio
async def test_a_batch_of_thought_records_waits_at_most_twice(through_proxy: tuple[Database, Proxy]) -> None:
    db, proxy = through_proxy
    chain = _chain(db)
    session = await _session(chain)
    await chain.run("thought_record", {"session_id": session, "kind": "plan", "content": "warm up"})

    before = proxy.waits()
    replies = await _together(
        chain, [{"session_id": session, "kind": "plan", "content": f"step {n}"} for n in range(8)]
    )
    assert [reply.envelope["ok"] for reply in replies] == [True] * 8
    # The first call's reads (the chain's head, the log's tail) and COMMIT: no read per call, and
    # no row number read back per call (storage/audit_ahead.py).
    assert _waited(proxy, before) <= 2
    numbers = [row[0] for row in db.execute("SELECT sequence_no FROM actions ORDER BY sequence_no")]
    assert len(numbers) == len(set(numbers)) == 10
    receipts = [reply.receipt for reply in replies]
    assert all(receipt is not None for receipt in receipts)


@pytest.mark.anyio
async def test_a_closed_or_unknown_session_in_a_batch_gets_its_own_error(
    through_proxy: tuple[Database, Proxy],
) -> None:
    db, _ = through_proxy
    chain = _chain(db)
    session, sealed = await _session(chain), await _session(chain)
    await chain.run("thought_record", {"session_id": sealed, "kind": "plan", "content": "only"})
    assert (await chain.run("merkle_finalize", {"session_id": sealed})).envelope["ok"]
    calls = [{"session_id": session, "kind": "plan", "content": f"step {n}"} for n in range(6)]
    calls[2] = {"session_id": sealed, "kind": "plan", "content": "too late"}
    calls[4] = {"session_id": "no-such-session", "kind": "plan", "content": "nowhere"}

    replies = await _together(chain, calls)
    codes = [None if reply.envelope["ok"] else reply.envelope["error"]["code"] for reply in replies]
    assert codes == [None, None, "SESSION_FINALIZED", None, "SESSION_NOT_FOUND", None]
    assert replies[2].envelope["error"]["message"].startswith(sealed)
    contents = [row[0] for row in db.execute("SELECT content FROM thought_records ORDER BY seq")]
    assert contents == ["only", "step 0", "step 1", "step 3", "step 5"]
    outcomes = [row[0] for row in db.execute("SELECT outcome FROM actions WHERE tool = 'thought_record'"
                                             " ORDER BY sequence_no")]  # fmt: skip
    assert outcomes == ["ok", "ok", "ok", "error", "ok", "error", "ok"]


@pytest.mark.anyio
async def test_a_refusal_read_back_within_its_own_call_still_gets_the_calls_error(
    through_proxy: tuple[Database, Proxy], open_second: Callable[[], Database]
) -> None:
    db, _ = through_proxy
    chain = _chain(db)
    session, sealed = await _session(chain), await _session(chain)
    await chain.run("thought_record", {"session_id": sealed, "kind": "plan", "content": "only"})
    assert (await chain.run("merkle_finalize", {"session_id": sealed})).envelope["ok"]
    # Another replica appends: the log's tail this one remembers is stale, so the first call of the
    # batch reads the tail's nodes after its insert, inside its own savepoint, where the refusal
    # surfaces and would be rolled back as that call's storage error.
    other = _chain(open_second())
    await other.run("thought_record", {"session_id": session, "kind": "plan", "content": "elsewhere"})
    calls = [{"session_id": sealed, "kind": "plan", "content": "too late"}]
    calls += [{"session_id": session, "kind": "plan", "content": f"step {n}"} for n in range(2)]

    replies = await _together(chain, calls)
    codes = [None if reply.envelope["ok"] else reply.envelope["error"]["code"] for reply in replies]
    assert codes == ["SESSION_FINALIZED", None, None]
