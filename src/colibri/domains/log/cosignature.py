"""C2SP tlog-cosignature, the Ed25519 type (`cosignature/v1`, signature type 0x04).

    cosigner key   PRIVATE+KEY+<name>+<key ID>+<base64(0x04 ‖ 32-byte seed)>
    verifier key   <name>+<key ID>+<base64(0x04 ‖ 32-byte public key)>
    key ID         SHA-256(<name> ‖ "\\n" ‖ 0x04 ‖ public key)[:4]
    signature line "— <name> base64(key ID ‖ u64 big-endian timestamp ‖ Ed25519 signature)"
    signed message "cosignature/v1\\n" "time <timestamp>\\n" and the checkpoint's whole note text

A witness (colibri witness serve) cosigns with `cosign`; a log, and `verify --witness-policy`,
check the lines with `timestamp_of`. Written from the C2SP specification; the interop test checks
them with Go's crypto/ed25519.
"""

from __future__ import annotations

import base64

from colibri.domains.log.note import (
    ALG_COSIGNATURE,
    SIGNATURE_PREFIX,
    NoteError,
    NoteRejected,
    Signer,
    Verifier,
    split_note,
)

HEADER = "cosignature/v1\n"
_MAX_TIMESTAMP = (1 << 63) - 1


def message(text: str, timestamp: int) -> bytes:
    """What a cosigner signs: the header, the timestamp line and the checkpoint's note text."""
    return f"{HEADER}time {timestamp}\n{text}".encode()


def cosign(text: str, cosigner: Signer, timestamp: int) -> str:
    """The cosignature line (with its newline) of `cosigner` on the checkpoint note text `text`."""
    if cosigner.alg != ALG_COSIGNATURE:
        raise NoteError("a cosignature is made with a cosigner key (`colibri key generate --cosigner`)")
    if not 0 < timestamp <= _MAX_TIMESTAMP:
        raise NoteError("a cosignature's timestamp is a POSIX time greater than 0")
    raw = cosigner.hash.to_bytes(4, "big") + timestamp.to_bytes(8, "big")
    raw += cosigner.sign(message(text, timestamp))
    return f"{SIGNATURE_PREFIX}{cosigner.name} {base64.b64encode(raw).decode()}\n"


def parse_cosigner_key(vkey: str) -> Verifier:
    """A cosigner's verifier key (type 0x04); BadKey otherwise."""
    return Verifier.parse(vkey, ALG_COSIGNATURE)


def timestamp_of(note: str, witness: Verifier) -> int | None:
    """The timestamp of `witness`'s valid cosignature on the checkpoint `note`, or None when the note
    carries none. A line with the witness's name and key ID whose signature fails raises NoteRejected,
    as signed-note asks of a known key."""
    text, lines = split_note(note)
    found = None
    for line in lines:
        if line.name != witness.name or line.key_id != witness.hash:
            continue
        if len(line.signature) != 8 + 64:
            raise NoteRejected(
                f"the cosignature by {witness.name} is not a timestamp and an Ed25519 signature"
            )
        timestamp = int.from_bytes(line.signature[:8], "big")
        if not 0 < timestamp <= _MAX_TIMESTAMP or not witness.verify(
            message(text, timestamp), line.signature[8:]
        ):
            raise NoteRejected(f"the cosignature by {witness.name} ({witness.hash:08x}) is invalid")
        found = timestamp
    return found
