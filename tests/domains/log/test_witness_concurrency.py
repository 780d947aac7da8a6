"""`colibri witness serve` decides one submission per origin at a time (SPEC §16): eight clients
that post `add-checkpoint` for one origin at once, all from the size it holds, get exactly one 200;
the others 409 with the size the winner left, and the witness's state is the winner's checkpoint.

Each submits another size, so the 409s' body, the state file and the monitors' checkpoint all
name the winner; a race between two submissions (both reading the old size, both cosigning)
would show as a second 200 or as a state that is not the one the 409s name.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2

from colibri.domains.log import tree
from colibri.domains.log.checkpoint import Checkpoint
from colibri.domains.log.note import Signer, sign
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.domains.log.witnesses import make_witness, running
from tests.domains.trail.helpers import build_chain
from tests.helpers import clean_env, query

CLIENTS = 8
HELD = 10
# One origin a round, each round another chance for a race to show: without the witness's lock,
# 20 rounds failed 6 runs out of 6 (a second 200, or 503s from one connection used by two threads).
ROUNDS = 20


class Log:
    """A store of log entries, signed under any origin: checkpoints and consistency proofs."""

    def __init__(self, path: Path, signer: Signer) -> None:
        db = SQLiteDatabase.open(path)
        migrate(db, MIGRATIONS)
        build_chain(db, HELD + CLIENTS + 1)
        self.db = db
        self.signer = signer

    def body(self, origin: str, old: int, size: int) -> bytes:
        with self.db.snapshot() as conn:
            root = tree.root(conn, size)
            proof = tree.consistency_proof(conn, old, size) if 0 < old < size else []
        note = sign(Checkpoint(origin, size, root).body(), self.signer)
        lines = "".join(base64.b64encode(node).decode() + "\n" for node in proof)
        return f"old {old}\n{lines}\n{note}".encode()


def _at_once(url: str, bodies: list[bytes]) -> list[httpx2.Response]:
    """Each body posted from its own thread, all let go together."""
    ready = threading.Barrier(len(bodies))

    def submit(body: bytes) -> httpx2.Response:
        ready.wait(timeout=30)
        return httpx2.post(url, content=body, timeout=30)

    with ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(submit, bodies))


def test_one_submission_per_origin_at_a_time(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    signer = Signer.generate("example.com/concurrent")
    log = Log(tmp_path / "log.db", signer)
    origins = [f"example.com/concurrent-{n}" for n in range(ROUNDS)]
    witness = make_witness(tmp_path, env, "w1", [f"{o} {signer.verifier().key()}" for o in origins])
    sizes = [HELD + 1 + n for n in range(CLIENTS)]
    post = f"{witness.url}/add-checkpoint"
    try:
        with running(witness), httpx2.Client(timeout=30) as http:
            for origin in origins:
                assert http.post(post, content=log.body(origin, 0, HELD)).status_code == 200
                answers = _at_once(post, [log.body(origin, HELD, size) for size in sizes])
                statuses = sorted(answer.status_code for answer in answers)
                assert statuses == [200] + [409] * (CLIENTS - 1), [a.text for a in answers]
                [winner] = [
                    size for size, answer in zip(sizes, answers, strict=True) if answer.status_code == 200
                ]
                refused = {
                    (a.headers["content-type"].split(";")[0], a.text) for a in answers if a.status_code == 409
                }
                assert refused == {("text/x.tlog.size", f"{winner}\n")}, origin

                held = query(witness.db, "SELECT size FROM witness_checkpoints WHERE origin = ?", (origin,))
                assert [row[0] for row in held] == [winner]
                monitored = http.get(
                    f"{witness.url}/{hashlib.sha256(origin.encode()).hexdigest()}/checkpoint"
                )
                assert monitored.text.startswith(f"{origin}\n{winner}\n"), monitored.text
                # The state is whole: the next submission goes on from the winner's size.
                grown = http.post(post, content=log.body(origin, winner, HELD + CLIENTS + 1))
                assert grown.status_code == 200, grown.text
    finally:
        log.db.close()
