"""The audited gateway's receipts (SPEC §22): every answer with a row names the row's log entry.

The entry is the last row written for the call (the attempt that answered, or the call's one row
when no server was asked), appended by `ActionLog` in the transaction the answer waits for, so a
receipt is shown only once its entry is committed. It goes in the result's `_meta` under
`io.colibri/receipt`; a JSON-RPC error has no result and so no `_meta` to carry one.

A downstream Colibri's own receipt (its log's entry for the same call) is passed on beside it,
under `io.colibri/downstream-receipt`: the client can prove both records, and the gateway's key
names only its own log. It is moved before the answer's digest is taken, so the row's
`result_hash` is the digest of what the client receives less the gateway's receipt (digests.py).

A result is never changed in place: a downstream's or one the switchboard keeps is copied.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from colibri.domains.log.api import RECEIPT, Receipt
from colibri.switchboard.routing import Answer

DOWNSTREAM_RECEIPT = "io.colibri/downstream-receipt"


def moved_aside(answer: Answer) -> None:
    """A downstream's receipt in the answer's result moves to DOWNSTREAM_RECEIPT."""
    meta = _meta(answer.result)
    if meta is None or RECEIPT not in meta:
        return
    kept = {key: value for key, value in meta.items() if key != RECEIPT}
    _set_meta(answer, kept | {DOWNSTREAM_RECEIPT: meta[RECEIPT]})


def stamp(answer: Answer, receipt: object) -> None:
    """The answer's result carries `receipt` (a `Receipt`; anything else: nothing was logged)."""
    if isinstance(receipt, Receipt) and answer.result is not None:
        _set_meta(answer, (_meta(answer.result) or {}) | {RECEIPT: receipt.meta()})


def _meta(result: object) -> dict[str, Any] | None:
    meta = result.get("_meta") if isinstance(result, dict) else getattr(result, "meta", None)
    return meta if isinstance(meta, dict) else None


def _set_meta(answer: Answer, meta: dict[str, Any]) -> None:
    result = answer.result
    if isinstance(result, dict):
        answer.result = {**result, "_meta": meta}
    elif isinstance(result, types.Result):
        answer.result = result.model_copy(update={"meta": meta})
