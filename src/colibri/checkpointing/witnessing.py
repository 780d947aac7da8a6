"""Submitting checkpoints to the witnesses of COLIBRI_WITNESS_POLICY (SPEC §16, C2SP tlog-witness).

One `Submitter` per witness, so one submission is in flight per witness: it sends the latest
stored checkpoint with `old N` (the size the witness last cosigned) and the consistency proof from
N; a 409 answer's size restarts it from the witness's size (one naming the size sent means another
root at that size, and fails at once); a 200 answer's cosignature is checked
against the witness's key and stored with the checkpoint (and the exported file is written again
with it). Anything else (no answer, a refusal, garbage, a cosignature that does not verify) is
logged and recorded for `colibri checkpoint --status`, and the witness is tried again later, with
backoff. Nothing here holds the store's lock (the `Runner`'s) while it waits for a witness, so no call waits
for one.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from colibri.core.clock import utc_now
from colibri.core.database import Connection, Database
from colibri.core.errors import StorageError
from colibri.domains.log import cosigned, store, tree
from colibri.domains.log.cosignature import timestamp_of
from colibri.domains.log.notary import Notary, export
from colibri.domains.log.note import SIGNATURE_PREFIX, NoteError, shown
from colibri.domains.log.policy import Witness
from colibri.domains.log.store import StoredCheckpoint

if TYPE_CHECKING:
    import httpx2

log = logging.getLogger("colibri.witness")
T = TypeVar("T")

MAX_CONFLICTS = 4  # 409 answers in a row before the submission counts as failed
SIZE_TYPE = "text/x.tlog.size"


class StoreClosed(StorageError):
    """The store a `Runner` works on has been closed: the duties that use it are over."""


class Runner(Protocol):
    """Runs `work` on the store where it may: under the owner's lock, off the event loop (a server's
    chain lock and worker, the switchboard's audit writer, the CLI's own connection). Raises
    `StoreClosed` once the store is closed."""

    def __call__(self, work: Callable[[Database], T]) -> Awaitable[T]: ...


@dataclass
class WitnessedNotary:
    """The notary, counting the checkpoints it makes so that the submitters wake for each one."""

    notary: Notary
    made: int = 0

    def make(self, conn: Connection, reason: str, session_id: str | None = None) -> StoredCheckpoint:
        checkpoint = self.notary.make(conn, reason, session_id)
        self.made += 1
        return checkpoint

    def make_if_grown(self, conn: Connection, reason: str) -> StoredCheckpoint | None:
        checkpoint = self.notary.make_if_grown(conn, reason)
        self.made += checkpoint is not None
        return checkpoint


def request_body(old: int, proof: list[bytes], note: str) -> bytes:
    """An add-checkpoint request: `old N`, the proof lines, a blank line, the signed checkpoint."""
    lines = [f"old {old}", *(base64.b64encode(node).decode() for node in proof), ""]
    return ("".join(f"{line}\n" for line in lines) + note).encode()


def cosignature_in(answer: str, note: str, witness: Witness) -> tuple[str, int] | None:
    """The witness's valid cosignature line in a 200 answer, with its timestamp; None when there is
    none (lines by other keys are ignored; a line by this key that does not verify is garbage)."""
    for line in answer.split("\n"):
        if not line.startswith(SIGNATURE_PREFIX):
            continue
        try:
            timestamp = timestamp_of(note + line + "\n", witness.key)
        except NoteError:
            return None
        if timestamp is not None:
            return line + "\n", timestamp
    return None


def conflict_size(status: int, content_type: str, text: str) -> int | None:
    """The witness's size in a 409 answer, or None when the answer is not one."""
    value = text.removesuffix("\n")
    if status != 409 or content_type != SIZE_TYPE or not value.isascii() or not value.isdigit():
        return None
    return int(value)


class Submitter:
    """One witness's submissions: `step` brings it up to the latest stored checkpoint."""

    def __init__(
        self, witness: Witness, run: Runner, http: httpx2.AsyncClient, export_dir: Path | None
    ) -> None:
        self.witness = witness
        self._run = run
        self._http = http
        self._export_dir = export_dir  # where the checkpoint is written again with the cosignature
        self.size: int | None = None  # the size the witness holds, when it said so (409) or cosigned

    async def step(self) -> bool:
        """Submit the latest checkpoint unless the witness cosigned it; True when nothing is left to do."""
        latest, done, cosigned_size = await self._run(self._read)
        if latest is None or done:
            return True
        old = self.size if self.size is not None else (cosigned_size or 0)
        error = await self._submit(latest, old)
        if error is None:
            return True
        await self._run(partial(self._record, error))
        log.warning("witness %s: %s; trying again later", self.witness.name, error)
        return False

    async def _submit(self, latest: StoredCheckpoint, old: int) -> str | None:
        from colibri.checkpointing.witness_http import WitnessUnreachable, post

        url = f"{self.witness.url}/add-checkpoint"
        for _ in range(MAX_CONFLICTS):
            if old > latest.size:
                return f"it holds size {old}, more than the latest checkpoint's {latest.size}"
            proof = await self._run(partial(_proof, old, latest.size)) if 0 < old < latest.size else []
            try:
                answer = await post(self._http, url, request_body(old, proof, latest.note))
            except WitnessUnreachable as exc:
                return f"no answer from {url} ({exc})"
            size = conflict_size(answer.status, answer.content_type, answer.text)
            if size is not None and size == old:  # it holds the size sent, so another root: no retry helps
                return (
                    f"{url} holds another checkpoint of size {size} (409): a fork of the log, or not this log"
                )
            if size is not None:
                old = self.size = size  # the witness holds another size: start again from it
                continue
            if answer.status != 200:
                return f"{url} answered HTTP {answer.status}: {shown(answer.text.strip())}"
            found = cosignature_in(answer.text, latest.note, self.witness)
            if found is None:
                return f"{url} answered 200 without a valid cosignature by {self.witness.key.key()}"
            await self._run(partial(self._keep, latest, *found))
            self.size = latest.size
            return None
        return f"{url} answered 409 {MAX_CONFLICTS} times in a row"

    def _read(self, db: Database) -> tuple[StoredCheckpoint | None, bool, int | None]:
        key = self.witness.key.key()
        with db.snapshot() as conn:
            latest = store.latest_checkpoint(conn)
            if latest is None or latest.id is None:
                return None, True, None
            done = (
                conn.execute(
                    "SELECT 1 FROM log_cosignatures WHERE checkpoint_id = ? AND witness_key = ?",
                    (latest.id, key),
                ).fetchone()
                is not None
            )
            return latest, done, cosigned.cosigned_size(conn, key)

    def _keep(self, checkpoint: StoredCheckpoint, line: str, timestamp: int, db: Database) -> None:
        assert checkpoint.id is not None
        key = self.witness.key.key()
        with db.atomic() as conn:
            cosigned.add_cosignature(conn, checkpoint.id, key, line, timestamp)
            cosigned.record_attempt(conn, key, self.witness.name, self.witness.url, utc_now(), None)
            lines = cosigned.cosignature_lines(conn, checkpoint.id)
        if self._export_dir is not None:
            export(self._export_dir, checkpoint, cosigned.with_cosignatures(checkpoint.note, lines))

    def _record(self, error: str, db: Database) -> None:
        with db.atomic() as conn:
            key = self.witness.key.key()
            cosigned.record_attempt(conn, key, self.witness.name, self.witness.url, utc_now(), error)


def _proof(old: int, new: int, db: Database) -> list[bytes]:
    with db.snapshot() as conn:
        return tree.consistency_proof(conn, old, new)
