"""C2SP signed notes with Ed25519, and keys in the note key format (Go's golang.org/x/mod/sumdb/note).

    signer key    PRIVATE+KEY+<name>+<hash>+<base64(0x01 ‖ 32-byte seed)>
    verifier key  <name>+<hash>+<base64(0x01 ‖ 32-byte public key)>
    key hash      first 4 bytes (big-endian, 8 hex digits) of SHA-256(name ‖ "\\n" ‖ 0x01 ‖ public key)

A signed note is its text (ending in a newline), a blank line, then one line per signature:
"— <name> <base64(key hash ‖ Ed25519 signature of the text)>". The whole note is UTF-8 with
no control characters other than newline. Written from the C2SP signed-note specification;
the tests hold it to the examples of the Go package's documentation.

NoteError
├── KeyError_        a key string is malformed or its hash does not match
└── NoteRejected     a note is malformed, unsigned by the key, or its signature is invalid
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import unicodedata
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALG_ED25519 = 1
ALG_COSIGNATURE = 4  # timestamped Ed25519 checkpoint cosignatures (C2SP tlog-cosignature, cosignature.py)
_ALG_NAMES = {ALG_ED25519: "an Ed25519 key (algorithm 1", ALG_COSIGNATURE: "a cosigner key (algorithm 4"}
SIGNATURE_PREFIX = "— "
MAX_SIGNATURES = 100
SHOWN_CHARS = 200  # the most of a bad input line any message echoes (SPEC §14)


class NoteError(ValueError):
    """A key or a note could not be used."""


class BadKey(NoteError):
    """A key string is malformed, of an unknown algorithm, or its hash does not match."""


class NoteRejected(NoteError):
    """A note is malformed, carries no signature by the key, or its signature is invalid."""


def valid_name(name: str) -> bool:
    """A key name: non-empty, no Unicode space, no '+'."""
    return bool(name) and "+" not in name and not any(_is_space(ch) for ch in name)


def key_hash(name: str, public_key: bytes, alg: int = ALG_ED25519) -> int:
    """The 32-bit key hash (key ID) of a named Ed25519 public key used with signature type `alg`."""
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([alg]) + public_key).digest()
    return int.from_bytes(digest[:4], "big")


@dataclass(frozen=True, slots=True)
class Verifier:
    """One named Ed25519 public key, for note signatures (alg 1) or cosignatures (alg 4)."""

    name: str
    hash: int
    public_key: bytes
    alg: int = ALG_ED25519

    @classmethod
    def parse(cls, vkey: str, alg: int = ALG_ED25519) -> Verifier:
        name, hash_hex, data = _split_key(vkey.strip(), parts=3, what="verifier key")
        raw = _b64(data, "verifier key")
        if len(raw) != 33 or raw[0] != alg:
            raise BadKey(f"the verifier key is not {_ALG_NAMES[alg]}, 32 bytes)")
        verifier = cls(name, _hash_value(hash_hex), raw[1:], alg)
        if key_hash(name, verifier.public_key, alg) != verifier.hash:
            raise BadKey("the verifier key's hash does not match its name and key")
        return verifier

    def key(self) -> str:
        data = base64.b64encode(bytes([self.alg]) + self.public_key).decode()
        return f"{self.name}+{self.hash:08x}+{data}"

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public_key).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True


@dataclass(frozen=True, slots=True)
class Signer:
    """One named Ed25519 private key, for note signatures (alg 1) or cosignatures (alg 4)."""

    name: str
    hash: int
    seed: bytes
    alg: int = ALG_ED25519

    @classmethod
    def parse(cls, skey: str, alg: int = ALG_ED25519) -> Signer:
        parts = skey.strip().split("+", 2)
        if len(parts) != 3 or parts[:2] != ["PRIVATE", "KEY"]:
            raise BadKey("a signer key starts with PRIVATE+KEY+")
        name, hash_hex, data = _split_key(parts[2], parts=3, what="signer key")
        raw = _b64(data, "signer key")
        if len(raw) != 33 or raw[0] != alg:
            raise BadKey(f"the signer key is not {_ALG_NAMES[alg]}, 32 bytes)")
        signer = cls(name, _hash_value(hash_hex), raw[1:], alg)
        if key_hash(name, signer.public_key(), alg) != signer.hash:
            raise BadKey("the signer key's hash does not match its name and key")
        return signer

    @classmethod
    def generate(cls, name: str, alg: int = ALG_ED25519) -> Signer:
        if not valid_name(name):
            raise BadKey(f"key name {name!r} must be non-empty, without spaces or '+'")
        seed = Ed25519PrivateKey.generate().private_bytes_raw()
        public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        return cls(name, key_hash(name, public, alg), seed, alg)

    def public_key(self) -> bytes:
        key = Ed25519PrivateKey.from_private_bytes(self.seed).public_key()
        return key.public_bytes_raw()

    def key(self) -> str:
        data = base64.b64encode(bytes([self.alg]) + self.seed).decode()
        return f"PRIVATE+KEY+{self.name}+{self.hash:08x}+{data}"

    def verifier(self) -> Verifier:
        return Verifier(self.name, self.hash, self.public_key(), self.alg)

    def sign(self, message: bytes) -> bytes:
        return Ed25519PrivateKey.from_private_bytes(self.seed).sign(message)


def sign(text: str, signer: Signer, *more: Signer) -> str:
    """The signed note: `text`, a blank line, and one signature line per signer, in order."""
    _check_text(text)
    if any(each.alg != ALG_ED25519 for each in (signer, *more)):
        raise NoteError("a note is signed with Ed25519 note keys; a cosigner key cosigns (cosignature.py)")
    body = text.encode()
    lines = []
    for each in (signer, *more):
        signature = base64.b64encode(each.hash.to_bytes(4, "big") + each.sign(body)).decode()
        lines.append(f"{SIGNATURE_PREFIX}{each.name} {signature}\n")
    return f"{text}\n{''.join(lines)}"


def shown(line: str) -> str:
    """A line of untrusted input as an error message may quote it: at most SHOWN_CHARS characters."""
    if len(line) <= SHOWN_CHARS:
        return repr(line)
    return f"{line[:SHOWN_CHARS]!r}... ({len(line):,} characters)"


@dataclass(frozen=True, slots=True)
class SignatureLine:
    """One signature line of a note: the key name, the key ID, the signature after it, the line."""

    name: str
    key_id: int
    signature: bytes
    line: str


def split_note(message: str) -> tuple[str, list[SignatureLine]]:
    """The note's text (ending in a newline) and its signature lines; NoteRejected when malformed."""
    if any(ord(ch) < 0x20 and ch != "\n" for ch in message):
        raise NoteRejected("the note contains control characters other than newline")
    split = message.rfind("\n\n")
    if split < 0:
        raise NoteRejected("the note has no blank line before its signatures")
    text, block = message[: split + 1], message[split + 2 :]
    if not block.endswith("\n"):
        raise NoteRejected("the note's last signature line does not end with a newline")
    lines = block[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise NoteRejected(f"the note has more than {MAX_SIGNATURES} signatures")
    parsed = []
    for line in lines:
        name, signature = _parse_signature_line(line)
        parsed.append(SignatureLine(name, int.from_bytes(signature[:4], "big"), signature[4:], line))
    return text, parsed


def open_note(message: str, verifier: Verifier) -> str:
    """The note's text, once a signature by `verifier` checks out; NoteRejected otherwise.

    Signatures by other keys are ignored, as the format allows several signers.
    """
    if verifier.alg != ALG_ED25519:
        raise NoteError("a cosigner key checks cosignatures (cosignature.py), not note signatures")
    text, lines = split_note(message)
    found = False
    for line in lines:
        if line.name != verifier.name or line.key_id != verifier.hash:
            continue
        if not verifier.verify(text.encode(), line.signature):
            raise NoteRejected(f"the signature by {verifier.name} ({verifier.hash:08x}) is invalid")
        found = True
    if not found:
        raise NoteRejected(f"the note carries no signature by the key {verifier.name}+{verifier.hash:08x}")
    return text


def _parse_signature_line(line: str) -> tuple[str, bytes]:
    if not line.startswith(SIGNATURE_PREFIX):
        raise NoteRejected(f"signature line {shown(line)} does not start with an em dash and a space")
    name, _, data = line[len(SIGNATURE_PREFIX) :].partition(" ")
    try:
        signature = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        signature = b""
    if not valid_name(name) or len(signature) < 5:
        raise NoteRejected(f"signature line {shown(line)} is malformed")
    return name, signature


def _check_text(text: str) -> None:
    if not text.endswith("\n") or any(ord(ch) < 0x20 and ch != "\n" for ch in text):
        raise NoteError("a note's text ends with a newline and holds no other control characters")


def _split_key(value: str, *, parts: int, what: str) -> list[str]:
    pieces = value.split("+", parts - 1)
    if len(pieces) != parts or not valid_name(pieces[0]):
        raise BadKey(f"the {what} is not of the form NAME+HASH+KEY (see `colibri key generate`)")
    return pieces


def _hash_value(text: str) -> int:
    if len(text) != 8 or any(ch not in "0123456789abcdefABCDEF" for ch in text):
        raise BadKey("a key's hash is 8 hex digits")
    return int(text, 16)


def _b64(data: str, what: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise BadKey(f"the {what}'s key data is not base64") from None


def _is_space(ch: str) -> bool:
    # Go's unicode.IsSpace: the Unicode White_Space property.
    return ch.isspace() or unicodedata.category(ch) == "Zs"
