"""The checkpoints the trail page shows (SPEC §11): the one made at the session's seal and the
latest, each with whether its signature opens under the verifier key. The key is a verifier key
(`colibri ui --verifier-key`, or the signer `serve --http` holds in memory), or else the one the
store recorded for its latest checkpoint: the pages never open a signer's key file (SPEC §14).
A key read from the store only shows the checkpoints were signed by the key the store names;
a key kept elsewhere is what exposes a store rewritten along with its keys."""

from __future__ import annotations

from dataclasses import dataclass, replace

from colibri.core.database import Connection
from colibri.domains.log.checkpoint import open_checkpoint
from colibri.domains.log.cosigned import witness_status
from colibri.domains.log.note import NoteError, Verifier
from colibri.domains.log.store import StoredCheckpoint, latest_checkpoint, seal_checkpoint


@dataclass(frozen=True, slots=True)
class ShownCheckpoint:
    size: int
    root: str
    made_at: str
    reason: str
    signature_ok: bool | None  # None: no verifier key to check it with
    witnesses: tuple[tuple[str, int | None], ...] = ()  # each witness's last cosigned size (SPEC §16)


def recorded_verifier(conn: Connection) -> Verifier | None:
    """The verifier key the store names for its latest checkpoint, or None (none recorded, or not
    a key: then the page says the signatures were not checked)."""
    latest = latest_checkpoint(conn)
    if latest is None or latest.verifier_key is None:
        return None
    try:
        return Verifier.parse(latest.verifier_key)
    except NoteError:
        return None


def key_id(verifier: Verifier | None) -> str | None:
    """NAME+HASH of a verifier key: what names the key on a page (the key itself is long)."""
    return None if verifier is None else f"{verifier.name}+{verifier.hash:08x}"


def session_checkpoints(
    conn: Connection, session_id: str, verifier: Verifier | None
) -> dict[str, ShownCheckpoint | None]:
    latest = shown_checkpoint(latest_checkpoint(conn), verifier)
    if latest is not None and conn.execute(conn.dialect.table_exists, ("log_witnesses",)).fetchone():
        sizes = tuple((status.name, status.cosigned_size) for status in witness_status(conn))
        latest = replace(latest, witnesses=sizes)
    return {"seal": shown_checkpoint(seal_checkpoint(conn, session_id), verifier), "latest": latest}


def shown_checkpoint(stored: StoredCheckpoint | None, verifier: Verifier | None) -> ShownCheckpoint | None:
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
