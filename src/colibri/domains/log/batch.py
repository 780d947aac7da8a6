"""Entries of many stored rows at once, for the verifier's fast pass (fastcheck.py).

`record_entries(rows)` equals `[bytes.fromhex(stored_record_hash(*row)) for row in rows]` and
`action_entries(rows)` equals `[stored_action_entry(*row) for row in rows]`, byte for byte (a
hypothesis test holds them to those over random rows, awkward strings, floats and wrong
types included). They are faster for the rows Colibri writes: the JCS text of the fixed
shape is one f-string over the C string encoder, and a float's `repr` is already its
ECMAScript form unless it has an exponent, ends in `.0` or is not finite. Any other row (only
tampering makes one) takes the general functions, which accept anything.

Doing the work a column at a time (one type check per column, encoders mapped over whole
columns) was measured and is slower: the extra lists cost more than the calls they save.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from json.encoder import encode_basestring as _q

from colibri.domains.log.entries import stored_action_entry
from colibri.domains.trail.api import record_json, stored_record_hash

Row = Sequence[object]

_sha256 = hashlib.sha256


def record_entries(rows: Sequence[Row]) -> list[bytes]:
    """The entry of each stored (seq, session_id, kind, content, task_id, agent_id,
    created_at, prev_hash) row."""
    sha = _sha256
    try:
        return [sha(record_json(*row).encode()).digest() for row in rows]  # type: ignore[arg-type]
    except (TypeError, UnicodeEncodeError):  # a value of a wrong type: one row at a time
        return [bytes.fromhex(stored_record_hash(*row)) for row in rows]  # type: ignore[arg-type]


def action_entries(rows: Sequence[Row]) -> list[bytes]:
    """The entry of each stored (sequence_no, correlation_id, tool, principal, arguments,
    outcome, result_hash, started_at, duration_ms) row."""
    return [action_entry(row) for row in rows]


def action_entry(row: Row) -> bytes:
    """One row's entry; the common, well-typed row takes the short way."""
    number, correlation_id, tool, principal, arguments, outcome, result, started_at, duration = row
    if (
        type(number) is int
        and type(duration) is float
        and type(arguments) is str
        and type(correlation_id) is str
        and type(tool) is str
        and type(principal) is str
        and type(outcome) is str
        and type(started_at) is str
        and (result is None or type(result) is str)
    ):
        text = repr(duration)
        if "e" in text or "n" in text or text.endswith(".0"):  # exponent, inf, nan, integral
            return stored_action_entry(*row)
        sha = _sha256
        try:
            json = (
                f'{{"arguments_sha256":"{sha(arguments.encode()).hexdigest()}","correlation_id":'
                f'{_q(correlation_id)},"duration_ms":{text},"outcome":{_q(outcome)},"principal":'
                f'{_q(principal)},"result_sha256":{"null" if result is None else _q(result)},'
                f'"sequence_no":{number},"started_at":{_q(started_at)},"tool":{_q(tool)},"type":"action"}}'
            )
            return sha(json.encode()).digest()
        except UnicodeEncodeError:  # a lone surrogate: the general form says what it hashes to
            pass
    return stored_action_entry(*row)
