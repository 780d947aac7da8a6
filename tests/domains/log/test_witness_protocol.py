"""`colibri witness serve` answers every status of C2SP tlog-witness `add-checkpoint`, keeps one
cosigned checkpoint per origin in its own SQLite file, and refuses a forked log: a quorum of
cosignatures can never cover two histories under one origin."""

from __future__ import annotations

import base64
import hashlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from colibri.core.merkle import EMPTY_ROOT
from colibri.domains.log import tree
from colibri.domains.log.checkpoint import Checkpoint
from colibri.domains.log.cosignature import parse_cosigner_key, timestamp_of
from colibri.domains.log.note import Signer, sign
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.domains.log.witnesses import Witness, make_witness, running
from tests.domains.trail.helpers import build_chain
from tests.helpers import clean_env, colibri

ORIGINS = [f"example.com/log-{name}" for name in ("a", "b", "c", "d", "e", "f", "g", "fork")]


@dataclass
class Log:
    """A Colibri store whose log is signed under any origin asked for."""

    path: Path
    signer: Signer

    def checkpoint(self, origin: str, size: int | None = None) -> tuple[str, bytes]:
        """The signed note for the log's first `size` entries (default: all), and its root."""
        db = SQLiteDatabase.open(self.path)
        try:
            with db.snapshot() as conn:
                size = tree.size(conn) if size is None else size
                root = tree.root(conn, size)
        finally:
            db.close()
        return sign(Checkpoint(origin, size, root).body(), self.signer), root

    def proof(self, old: int, new: int) -> list[bytes]:
        db = SQLiteDatabase.open(self.path)
        try:
            with db.snapshot() as conn:
                return tree.consistency_proof(conn, old, new)
        finally:
            db.close()


@dataclass
class Setup:
    log: Log
    witness: Witness
    folder: Path


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    folder = tmp_path_factory.mktemp("witness")
    env = clean_env(folder)
    signer = Signer.generate("example.com/log")
    path = folder / "log.db"
    db = SQLiteDatabase.open(path)
    migrate(db, MIGRATIONS)
    build_chain(db, 40)
    db.close()
    logs = [f"{origin} {signer.verifier().key()}" for origin in ORIGINS]
    witness = make_witness(folder, env, "w1", logs)
    with running(witness):
        yield Setup(Log(path, signer), witness, folder)


def _post(setup: Setup, old: int, proof: list[bytes], note: str) -> httpx2.Response:
    body = f"old {old}\n" + "".join(base64.b64encode(node).decode() + "\n" for node in proof) + "\n" + note
    return _raw(setup, body.encode())


def _raw(setup: Setup, body: bytes) -> httpx2.Response:
    return httpx2.post(f"{setup.witness.url}/add-checkpoint", content=body, timeout=30)


def _cosigned(setup: Setup, answer: httpx2.Response, note: str) -> int:
    """The timestamp of the witness's valid cosignature in a 200 answer."""
    assert answer.status_code == 200, answer.text
    assert answer.text.startswith("— w1.example ") and answer.text.endswith("\n")
    timestamp = timestamp_of(note + answer.text, parse_cosigner_key(setup.witness.vkey))
    assert timestamp is not None and timestamp > 0
    return timestamp


def test_cosigns_a_first_checkpoint_and_its_growth(setup: Setup) -> None:
    origin = ORIGINS[0]
    note10, _ = setup.log.checkpoint(origin, 10)
    _cosigned(setup, _post(setup, 0, [], note10), note10)
    note25, _ = setup.log.checkpoint(origin, 25)
    _cosigned(setup, _post(setup, 10, setup.log.proof(10, 25), note25), note25)
    again = _post(setup, 25, [], note25)  # the same checkpoint again: cosigned again
    _cosigned(setup, again, note25)
    monitored = httpx2.get(f"{setup.witness.url}/{hashlib.sha256(origin.encode()).hexdigest()}/checkpoint")
    assert monitored.status_code == 200 and monitored.text.startswith(note25.partition("\n\n")[0])
    assert "— w1.example " in monitored.text and "— example.com/log " in monitored.text


def test_409_names_the_size_it_holds(setup: Setup) -> None:
    origin = ORIGINS[1]
    note10, _ = setup.log.checkpoint(origin, 10)
    _cosigned(setup, _post(setup, 0, [], note10), note10)
    note20, _ = setup.log.checkpoint(origin, 20)
    answer = _post(setup, 0, [], note20)
    assert answer.status_code == 409
    assert answer.headers["content-type"].startswith("text/x.tlog.size") and answer.text == "10\n"
    _cosigned(setup, _post(setup, 10, setup.log.proof(10, 20), note20), note20)


def test_404_for_a_log_it_does_not_follow_and_403_without_a_valid_signature(setup: Setup) -> None:
    note, _ = setup.log.checkpoint("example.com/unknown", 5)
    assert _post(setup, 0, [], note).status_code == 404
    stranger = Signer.generate("example.com/log")  # the log's name, another key: ignored, so unsigned
    body = note.partition("\n\n")[0] + "\n"
    unsigned = sign(Checkpoint(ORIGINS[2], 5, setup.log.checkpoint(ORIGINS[2], 5)[1]).body(), stranger)
    assert _post(setup, 0, [], unsigned).status_code == 403
    good, _ = setup.log.checkpoint(ORIGINS[2], 5)
    text, _, signature = good.partition("\n\n")
    name, data = signature.strip().removeprefix("— ").split(" ")
    raw = bytearray(base64.b64decode(data))
    raw[-1] ^= 1  # the right key's name and ID, a broken signature
    broken = f"{text}\n\n— {name} {base64.b64encode(bytes(raw)).decode()}\n"
    assert _post(setup, 0, [], broken).status_code == 403
    assert body


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"old 01\n\nx\n",
        b"new 0\n\nx\n",
        b"old 0\nnot base64\n\nx\n",
        b"old 0\n" + b"AAAA\n",
        b"old 0\n\n" + b"\xff\xfe",
    ],
)
def test_400_for_a_request_that_is_not_one(setup: Setup, body: bytes) -> None:
    assert _raw(setup, body).status_code == 400


def test_400_for_a_body_over_1_mib_or_more_than_63_proof_lines(setup: Setup) -> None:
    note, _ = setup.log.checkpoint(ORIGINS[3], 30)
    assert _raw(setup, b"old 0\n\n" + note.encode() + b"x" * (1 << 20)).status_code == 400
    proof = [bytes(32)] * 64
    assert _post(setup, 0, proof, note).status_code == 400
    assert _post(setup, 31, [], note).status_code == 400  # old exceeds the checkpoint's size
    assert _post(setup, 0, [], note).status_code == 200  # and nothing of that was kept


def test_422_for_inconsistent_checkpoints(setup: Setup) -> None:
    origin = ORIGINS[4]
    empty = sign(Checkpoint(origin, 0, bytes(32)).body(), setup.log.signer)  # size 0, not the empty root
    assert _post(setup, 0, [], empty).status_code == 422
    good_empty = sign(Checkpoint(origin, 0, EMPTY_ROOT).body(), setup.log.signer)
    assert _post(setup, 0, [], good_empty).status_code == 200
    note8, _ = setup.log.checkpoint(origin, 8)
    assert _post(setup, 0, [bytes(32)], note8).status_code == 422  # a proof with old 0
    assert _post(setup, 0, [], note8).status_code == 200
    note16, _ = setup.log.checkpoint(origin, 16)
    wrong = setup.log.proof(8, 16)
    wrong[0] = bytes(32)
    assert _post(setup, 8, wrong, note16).status_code == 422
    assert _post(setup, 8, [bytes(32)], note8).status_code == 422  # a proof from a size to itself


def test_409_for_the_size_held_with_another_root(setup: Setup) -> None:
    """C2SP: "If the old size matches the checkpoint size, the witness MUST check that the root
    hashes are also identical. If they don't match, the witness MUST respond with a 409"."""
    origin = ORIGINS[5]
    note8, _ = setup.log.checkpoint(origin, 8)
    _cosigned(setup, _post(setup, 0, [], note8), note8)
    other_root = sign(Checkpoint(origin, 8, bytes(32)).body(), setup.log.signer)
    answer = _post(setup, 8, [], other_root)
    assert answer.status_code == 409, answer.text
    assert answer.headers["content-type"].startswith("text/x.tlog.size") and answer.text == "8\n"
    _cosigned(setup, _post(setup, 8, [], note8), note8)  # the one it holds is still cosigned


def test_a_forked_log_is_refused(setup: Setup) -> None:
    """The same origin, one old entry rewritten, the tree rebuilt, re-signed with the log key: the
    witness that cosigned the original refuses every submission of the fork."""
    origin = ORIGINS[-1]
    note20, _ = setup.log.checkpoint(origin, 20)
    _cosigned(setup, _post(setup, 0, [], note20), note20)
    fork = Log(setup.folder / "fork.db", setup.log.signer)
    shutil.copy(setup.log.path, fork.path)
    db = SQLiteDatabase.open(fork.path)
    try:
        with db.atomic() as conn:
            entries = [(e.kind, e.ref, e.entry_hash) for e in tree.entries(conn)]
            entries[7] = (entries[7][0], entries[7][1], hashlib.sha256(b"a decision nobody made").digest())
            conn.execute("DELETE FROM log_entries")
            conn.execute("DELETE FROM log_nodes")
            for kind, ref, entry in entries:
                tree.append(conn, kind, ref, entry)
    finally:
        db.close()
    forked20, forked_root = fork.checkpoint(origin, 20)
    assert forked_root != setup.log.checkpoint(origin, 20)[1]
    forked30, _ = fork.checkpoint(origin, 30)
    assert _post(setup, 20, fork.proof(20, 30), forked30).status_code == 422
    same_size = _post(setup, 20, [], forked20)
    assert (same_size.status_code, same_size.text) == (409, "20\n")
    assert _post(setup, 0, [], forked30).status_code == 409
    honest30, _ = setup.log.checkpoint(origin, 30)
    _cosigned(setup, _post(setup, 20, setup.log.proof(20, 30), honest30), honest30)


def test_bad_arguments_exit_2(setup: Setup, tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    signer_key = tmp_path / "log.key"
    assert colibri("key", "generate", "--name", "x", "--out", str(signer_key), env=env).returncode == 0
    base = ["witness", "serve", "--http", "127.0.0.1:1", "--db", str(tmp_path / "w.db")]
    vkey = setup.log.signer.verifier().key()
    for extra in (
        ["--key", str(signer_key), "--log", f"o {vkey}"],  # a log key is not a cosigner key
        ["--key", str(setup.witness.key_file), "--log", "o not-a-key"],
        ["--key", str(setup.witness.key_file), "--log", vkey],  # no origin
    ):
        done = colibri(*base, *extra, env=env)
        assert done.returncode == 2 and "colibri witness serve:" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
