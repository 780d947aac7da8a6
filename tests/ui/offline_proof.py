"""A check of a downloaded call proof written for the tests alone, sharing no code with Colibri.

It trusts only a verifier key given to it and the standards the file names: RFC 8785 (the
`rfc8785` package) for the entry, the recursive PATH definition of RFC 9162 §2.1.3.1 (not the
iterative verifier Colibri uses) for the audit path, and C2SP signed-note with Ed25519 (the
`cryptography` package) for the checkpoint.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def check_call_proof(bundle: dict[str, Any], verifier_key: str) -> list[str]:
    """What fails in `bundle` (an empty list when it proves its entry is in the signed log)."""
    problems = []
    entry_hash = bytes.fromhex(bundle["entry_hash"])
    if hashlib.sha256(rfc8785.dumps(bundle["entry"])).digest() != entry_hash:
        problems.append("entry_hash is not the SHA-256 of the entry's JCS bytes")
    path = [bytes.fromhex(node) for node in bundle["audit_path"]]
    try:
        root = _root(bundle["log_index"], bundle["tree_size"], _leaf(entry_hash), path)
    except ValueError as exc:
        return [*problems, f"the audit path does not fit the tree: {exc}"]
    body, signatures = bundle["checkpoint"].split("\n\n", 1)
    lines = body.split("\n")
    if lines[1] != str(bundle["tree_size"]):
        problems.append(f"the checkpoint's size {lines[1]} is not tree_size {bundle['tree_size']}")
    if base64.b64decode(lines[2]) != root:
        problems.append("the audit path does not lead to the checkpoint's root")
    if not _signed(body + "\n", signatures, verifier_key):
        problems.append("no signature on the checkpoint opens under the verifier key")
    return problems


def cosignature_names(bundle: dict[str, Any]) -> list[str]:
    """The names on the checkpoint's signature lines, the log's own first."""
    _, signatures = bundle["checkpoint"].split("\n\n", 1)
    return [line.split(" ")[1] for line in signatures.splitlines() if line.startswith("\u2014 ")]


def _leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _root(index: int, size: int, leaf: bytes, path: list[bytes]) -> bytes:
    """MTH from PATH(index, D[0:size]) as RFC 9162 §2.1.3.1 defines it, recursively: the last
    hash of the path is the sibling at the top split."""
    if not 0 <= index < size:
        raise ValueError(f"index {index} outside a tree of {size}")
    if size == 1:
        if path:
            raise ValueError("hashes left over")
        return leaf
    if not path:
        raise ValueError("the path is too short")
    split = 1 << ((size - 1).bit_length() - 1)
    *below, sibling = path
    if index < split:
        return _node(_root(index, split, leaf, below), sibling)
    return _node(sibling, _root(index - split, size - split, leaf, below))


def _signed(text: str, signatures: str, verifier_key: str) -> bool:
    name, key_hash, key = verifier_key.split("+", 2)
    raw = base64.b64decode(key)
    if raw[0] != 1 or hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4].hex() != key_hash:
        raise ValueError(f"{verifier_key} is not an Ed25519 verifier key")
    public = Ed25519PublicKey.from_public_bytes(raw[1:])
    for line in signatures.splitlines():
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "\u2014" or parts[1] != name:
            continue
        blob = base64.b64decode(parts[2])
        if blob[:4].hex() != key_hash:
            continue
        try:
            public.verify(blob[4:], text.encode())
        except InvalidSignature:
            continue
        return True
    return False
