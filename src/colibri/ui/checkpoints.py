"""The checkpoints the trail page shows (SPEC §11): the one made at the session's seal and the
latest, each with whether its signature opens under the verifier key. The key is a verifier key
(`colibri ui --verifier-key`, or the signer `serve --http` holds in memory): the pages never
open a signer's key file (SPEC §14)."""

from __future__ import annotations

from dataclasses import dataclass

from colibri.core.database import Connection
from colibri.domains.log.checkpoint import open_checkpoint
from colibri.domains.log.note import NoteError, Verifier
from colibri.domains.log.store import StoredCheckpoint, latest_checkpoint, seal_checkpoint


@dataclass(frozen=True, slots=True)
class ShownCheckpoint:
    size: int
    root: str
    made_at: str
    reason: str
    signature_ok: bool | None  # None: no verifier key to check it with


def session_checkpoints(
    conn: Connection, session_id: str, verifier: Verifier | None
) -> dict[str, ShownCheckpoint | None]:
    return {
        "seal": _shown(seal_checkpoint(conn, session_id), verifier),
        "latest": _shown(latest_checkpoint(conn), verifier),
    }


def _shown(stored: StoredCheckpoint | None, verifier: Verifier | None) -> ShownCheckpoint | None:
    if stored is None:
        return None
    ok: bool | None = None
    if verifier is not None:
        try:
            checked = open_checkpoint(stored.note, verifier)
            ok = checked.size == stored.size and checked.root == stored.root
        except NoteError:
            ok = False
    return ShownCheckpoint(stored.size, stored.root.hex(), stored.made_at, stored.reason, ok)
