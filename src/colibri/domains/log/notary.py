"""Making checkpoints: sign the log's current size and root, store the note, export it."""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from colibri.core.clock import utc_now
from colibri.core.database import Connection
from colibri.domains.log import continuity, store, tree
from colibri.domains.log.checkpoint import Checkpoint
from colibri.domains.log.note import Signer, sign
from colibri.domains.log.policy import WitnessPolicy
from colibri.domains.log.store import StoredCheckpoint

log = logging.getLogger("colibri.log")

SEAL, INTERVAL, SHUTDOWN, ON_DEMAND, ROTATION = "seal", "interval", "shutdown", "on-demand", "key-rotation"


def default_origin(conn: Connection) -> str:
    return f"colibri/{store.database_id(conn)}"


@dataclass(frozen=True, slots=True)
class Notary:
    """Signs checkpoints with one key for one log origin (None: `colibri/<database id>`)."""

    signer: Signer
    origin: str | None = None
    export_dir: Path | None = None
    policy: WitnessPolicy | None = (
        None  # the witnesses each checkpoint is submitted to (runtime/witnessing.py)
    )

    def make(self, conn: Connection, reason: str, session_id: str | None = None) -> StoredCheckpoint:
        """Sign the log as it stands in this transaction; store and export the note.

        KeyContinuityError when the latest checkpoint was signed by another key: a server whose
        key was rotated away (`colibri key rotate`) stops signing instead of forking the key chain.
        """
        verifier = self.signer.verifier()
        continuity.check_signer(conn, verifier)
        size = tree.size(conn)
        root = tree.root(conn, size)
        origin = self.origin or default_origin(conn)
        note = sign(Checkpoint(origin, size, root).body(), self.signer)
        made = StoredCheckpoint(size, root, note, reason, session_id, utc_now(), verifier.key())
        return self._keep(conn, made)

    def hand_over(self, conn: Connection, new: Signer) -> StoredCheckpoint:
        """Sign the log as it stands with this key and `new`, naming `new` in the checkpoint
        (continuity.py); from then on only `new` may sign."""
        continuity.check_signer(conn, self.signer.verifier())
        size = tree.size(conn)
        root = tree.root(conn, size)
        origin = self.origin or default_origin(conn)
        body = Checkpoint(origin, size, root, (continuity.handover_line(new.verifier()),)).body()
        note = sign(body, self.signer, new)
        made = StoredCheckpoint(size, root, note, ROTATION, None, utc_now(), new.verifier().key())
        return self._keep(conn, made)

    def _keep(self, conn: Connection, checkpoint: StoredCheckpoint) -> StoredCheckpoint:
        stored = store.insert_checkpoint(conn, checkpoint)
        if self.export_dir is not None:
            export(self.export_dir, stored)
        return stored

    def make_if_grown(self, conn: Connection, reason: str) -> StoredCheckpoint | None:
        """A new checkpoint when the log has grown since the latest one (or has none yet)."""
        latest = store.latest_checkpoint(conn)
        size = tree.size(conn)
        if size == 0 or (latest is not None and latest.size == size):
            return None
        return self.make(conn, reason)


def export(folder: Path, checkpoint: StoredCheckpoint, note: str | None = None) -> None:
    """Write `<size>.checkpoint` into `folder` atomically (`note`: the checkpoint with its witnesses'
    cosignatures, once they came); a failure is logged, never fatal, because the checkpoint is
    already stored in the database."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".checkpoint-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(checkpoint.note if note is None else note)
        os.replace(temporary, folder / f"{checkpoint.size}.checkpoint")
    except OSError as exc:
        log.error("cannot export checkpoint %d to %s: %s", checkpoint.size, folder, exc)
