"""Entry hashes (SPEC §11): a thought record's is its record hash; a finished action's is

    SHA-256( JCS({"type": "action", sequence_no, correlation_id, tool, principal,
                  arguments_sha256, outcome, result_sha256, started_at, duration_ms}) )

The JCS text is written out in sorted key order (all keys are ASCII, so code-unit order is
plain `sorted`), strings through the stdlib's non-ASCII-escaping C encoder (as
trail/canonical.py explains, that is JCS for strings), and numbers as ECMAScript prints
them (`es_number`, core/jcs.py), which is what RFC 8785 §3.2.2.3 prescribes. A hypothesis test holds
`action_json` to the `rfc8785` package.

`stored_action_entry` is the verifier's form: it takes the values as stored, whatever was
done to them, and never raises; a tampered value simply cannot reproduce the entry.
"""

from __future__ import annotations

import hashlib
import math
from json.encoder import encode_basestring

from colibri.core.jcs import es_number

LOCAL_PRINCIPAL = "local"  # every call over stdio; authenticated principals arrive with HTTP serving

_q = encode_basestring
_sha256 = hashlib.sha256


def action_json(  # noqa: PLR0917 - positional in the order the audit row holds them
    sequence_no: int,
    correlation_id: str,
    tool: str,
    principal: str,
    arguments_sha256: str,
    outcome: str,
    result_sha256: str | None,
    started_at: str,
    duration_ms: float | None,
) -> str:
    """The JCS text of a finished action's log entry."""
    return _jcs(
        str(sequence_no),
        _q(correlation_id),
        _q(tool),
        _q(principal),
        _q(arguments_sha256),
        _q(outcome),
        "null" if result_sha256 is None else _q(result_sha256),
        _q(started_at),
        "null" if duration_ms is None else es_number(duration_ms),
    )


def action_entry(  # noqa: PLR0917 - positional in the order the audit row holds them
    sequence_no: int,
    correlation_id: str,
    tool: str,
    principal: str,
    arguments: str,
    outcome: str,
    result_sha256: str | None,
    started_at: str,
    duration_ms: float | None,
) -> bytes:
    """The entry hash of a finished action; `arguments` is the stored arguments text."""
    text = action_json(
        sequence_no,
        correlation_id,
        tool,
        principal,
        _sha256(arguments.encode()).hexdigest(),
        outcome,
        result_sha256,
        started_at,
        duration_ms,
    )
    return _sha256(text.encode()).digest()


def record_entry(record_hash: str) -> bytes:
    """A thought record's entry: the 32 raw bytes of its hash."""
    return bytes.fromhex(record_hash)


def stored_action_entry(  # noqa: PLR0917 - positional in column order, like action_entry
    sequence_no: object,
    correlation_id: object,
    tool: object,
    principal: object,
    arguments: object,
    outcome: object,
    result_sha256: object,
    started_at: object,
    duration_ms: object,
) -> bytes:
    """The entry an action row yields as stored now (see the module docstring)."""
    text = _jcs(
        str(sequence_no) if type(sequence_no) is int else _q(_text(sequence_no)),
        _q(_text(correlation_id)),
        _q(_text(tool)),
        _q(_text(principal)),
        _q(_sha256(_raw(arguments)).hexdigest()),
        _q(_text(outcome)),
        "null" if result_sha256 is None else _q(_text(result_sha256)),
        _q(_text(started_at)),
        _stored_number(duration_ms),
    )
    return _sha256(text.encode("utf-8", "surrogateescape")).digest()


def _jcs(  # noqa: PLR0917 - the already-encoded JSON values, in the row's order
    sequence_no: str,
    correlation_id: str,
    tool: str,
    principal: str,
    arguments_sha256: str,
    outcome: str,
    result_sha256: str,
    started_at: str,
    duration_ms: str,
) -> str:
    return (
        f'{{"arguments_sha256":{arguments_sha256},"correlation_id":{correlation_id},'
        f'"duration_ms":{duration_ms},"outcome":{outcome},"principal":{principal},'
        f'"result_sha256":{result_sha256},"sequence_no":{sequence_no},"started_at":{started_at},'
        f'"tool":{tool},"type":"action"}}'
    )


def _stored_number(value: object) -> str:
    """null, the number, or (a tampered, non-numeric value) a JSON string that cannot match."""
    if value is None:
        return "null"
    if type(value) in (int, float) and math.isfinite(value):  # type: ignore[arg-type]
        return es_number(value)  # type: ignore[arg-type]
    return _q(_text(value))


def _raw(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    return _text(value).encode("utf-8", "surrogateescape")


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(value)
