"""Key continuity (SPEC §14): the log's checkpoints stay signed by one key until a recorded handover.

Each stored checkpoint names the verifier key that signed it. A signer whose key is not the one
that signed the latest checkpoint is refused (`check_signer`), naming both keys, so a run that
quietly made itself a new key cannot go on signing the log. `colibri key rotate` records a
handover: one checkpoint signed by the old and the new key whose text carries the extension line
`key-handover <new verifier key>`, so the old key's signature vouches for the new key (a second
signature line alone would not: anyone can append one to a note). `key_chain` follows those
handovers from a key a verifier trusts to the keys that signed later checkpoints.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from colibri.core.database import Connection
from colibri.domains.log import store
from colibri.domains.log.checkpoint import Checkpoint, open_checkpoint
from colibri.domains.log.note import SIGNATURE_PREFIX, NoteError, Verifier, open_note, shown
from colibri.domains.log.store import StoredCheckpoint

HANDOVER = "key-handover "


class KeyContinuityError(NoteError):
    """The signing key is not the one that signed the log's latest checkpoint."""


def signer_of(checkpoint: StoredCheckpoint) -> str:
    """The verifier key that signed a stored checkpoint; for rows older than the column, the
    NAME+HASH of its signature lines (a note names its signers' keys, not their public keys)."""
    if checkpoint.verifier_key is not None:
        return checkpoint.verifier_key
    names = []
    for line in checkpoint.note.rpartition("\n\n")[2].splitlines():
        name, _, data = line.removeprefix(SIGNATURE_PREFIX).partition(" ")
        names.append(f"{name}+{_key_id(data)}")
    return " or ".join(names) or "an unknown key"


def check_signer(conn: Connection, verifier: Verifier) -> None:
    """Raise KeyContinuityError unless `verifier`'s key signed the latest checkpoint (or there is none)."""
    latest = store.latest_checkpoint(conn)
    if latest is None or latest.verifier_key == verifier.key():
        return
    if latest.verifier_key is None:
        try:
            open_note(latest.note, verifier)
            return
        except NoteError:
            pass
    raise KeyContinuityError(
        f"the signing key {verifier.key()} is not the key that signed the log's latest checkpoint "
        f"(size {latest.size}, signed by {signer_of(latest)}); sign with that key (COLIBRI_SIGNING_KEY), or "
        "record the handover first with `colibri key rotate --from OLD_FILE --to NEW_FILE`"
    )


def handover_line(new: Verifier) -> str:
    return HANDOVER + new.key()


def handed_to(checkpoint: Checkpoint) -> Verifier | None:
    """The key a handover checkpoint hands the log to, or None for any other checkpoint."""
    for line in checkpoint.extensions:
        if line.startswith(HANDOVER):
            try:
                return Verifier.parse(line.removeprefix(HANDOVER))
            except NoteError as exc:
                raise NoteError(f"the handover line {shown(line)} names no verifier key: {exc}") from exc
    return None


@dataclass(frozen=True, slots=True)
class Handover:
    """One recorded handover: the checkpoint both keys signed, and the key it handed over to."""

    checkpoint: Checkpoint
    to: Verifier


def key_chain(conn: Connection, trusted: Verifier, origin: str) -> list[Handover]:
    """The handovers stored in the database that lead on from `trusted`, in the order they were made.

    Each must be signed by the key before it and by the key it names; anything else (a note
    another key signed, a handover line the previous key did not sign) is not followed.
    """
    chain: list[Handover] = []
    current = trusted
    for kept in store.all_checkpoints(conn):
        try:
            checkpoint = open_checkpoint(kept.note, current)
            new = handed_to(checkpoint)
            if new is None or checkpoint.origin != origin:
                continue
            open_checkpoint(kept.note, new)
        except NoteError:
            continue
        chain.append(Handover(checkpoint, new))
        current = new
    return chain


def _key_id(signature: str) -> str:
    try:
        raw = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return "????????"
    return raw[:4].hex() if len(raw) >= 4 else "????????"
