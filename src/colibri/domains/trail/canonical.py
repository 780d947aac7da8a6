"""The canonical bytes of a thought record and its hash (SPEC §5).

    hash = SHA-256( JCS({seq, session_id, kind, content, task_id, agent_id, created_at, prev_hash}) )

RFC 8785 (JCS) for a record — strings, one integer, nulls — comes down to:
- object keys sorted by their UTF-16 code units. Every key here is ASCII, and for ASCII the
  UTF-16 code-unit order, the code-point order and Python's `sorted` all agree, so the keys
  are simply written below in that fixed order;
- strings escape only `"`, `\\` and U+0000..U+001F (as \\b \\t \\n \\f \\r or \\u00xx, lowercase
  hex); everything else, non-ASCII included, is written as itself in UTF-8. That is what the
  stdlib's C `encode_basestring` (json with ensure_ascii=False) produces;
- an integer within ±2**53 is its plain decimal form (`seq` stays far inside that);
- no whitespace.
A hypothesis test holds `record_json` to the `rfc8785` implementation on random records.

`record_json` is an f-string over the C string encoder rather than `json.dumps(...,
sort_keys=True)`: it builds no dict and sorts nothing, which the chain verifier needs to pass
300,000 records a second.
"""

from __future__ import annotations

import hashlib
from json.encoder import encode_basestring

GENESIS_HASH = "0" * 64  # prev_hash of the first record
RECORD_ID_PREFIX = "rec_"
RECORD_ID_HEX = 24  # 96 bits of the record hash
RECORD_ID_PATTERN = rf"^{RECORD_ID_PREFIX}[0-9a-f]{{{RECORD_ID_HEX}}}$"

_q = encode_basestring
_sha256 = hashlib.sha256


def record_json(  # noqa: PLR0917 - positional in column order: the verifier calls it per record
    seq: int,
    session_id: str,
    kind: str,
    content: str,
    task_id: str | None,
    agent_id: str | None,
    created_at: str,
    prev_hash: str,
) -> str:
    """The JCS text of a record (see the module docstring for why this is JCS)."""
    return (
        f'{{"agent_id":{"null" if agent_id is None else _q(agent_id)},"content":{_q(content)},'
        f'"created_at":{_q(created_at)},"kind":{_q(kind)},"prev_hash":{_q(prev_hash)},"seq":{seq},'
        f'"session_id":{_q(session_id)},"task_id":{"null" if task_id is None else _q(task_id)}}}'
    )


def record_hash(
    *,
    seq: int,
    session_id: str,
    kind: str,
    content: str,
    task_id: str | None,
    agent_id: str | None,
    created_at: str,
    prev_hash: str,
) -> str:
    """SHA-256 (lowercase hex) of the record's canonical UTF-8 bytes."""
    text = record_json(seq, session_id, kind, content, task_id, agent_id, created_at, prev_hash)
    return _sha256(text.encode()).hexdigest()


def record_id_for(hash_hex: str) -> str:
    """A record's id is derived from its hash, so it cannot be changed on its own.

    The database computes the same expression in a generated column (trail/schema.py).
    """
    return RECORD_ID_PREFIX + hash_hex[:RECORD_ID_HEX]


def stored_record_hash(  # noqa: PLR0917 - positional in column order, like record_json
    seq: int,
    session_id: object,
    kind: object,
    content: object,
    task_id: object,
    agent_id: object,
    created_at: object,
    prev_hash: object,
) -> str:
    """The hash of a record as it is stored now, whatever was done to the stored values.

    A legitimate row holds only valid text and takes `record_hash`. A row altered behind
    Colibri's back may hold a BLOB or bytes that are not UTF-8; those are hashed through
    their raw bytes (surrogateescape), which can never reproduce the original hash, so the
    verifier reports the row instead of crashing on it.
    """
    text = record_json(
        seq,
        _text(session_id),
        _text(kind),
        _text(content),
        _optional_text(task_id),
        _optional_text(agent_id),
        _text(created_at),
        _text(prev_hash),
    )
    return _sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)


def _optional_text(value: object) -> str | None:
    return None if value is None else _text(value)
