"""Receipts (SPEC §22): what an answer says of the log entry recorded for it.

`_meta["io.colibri/receipt"] = {"origin", "index", "leaf"}`: the log's origin line (the first line
of every checkpoint), the entry's index, and `leaf`, the entry hash in lowercase hex as every other
hash Colibri writes in JSON (SPEC §11: `colibri log entries`, `prove inclusion`'s `entry_hash`). It is
the leaf's data: a tlog-tiles client hashes it as RFC 9162 does (`tlog.RecordHash`, SHA-256 of 0x00
and it) and proves that index included under any checkpoint at least index + 1 in size.

`ActionLog` is the appender the audit writers hand their rows to: it appends the entry, as
`log_action` does, and returns the entry's `Receipt`, so the index comes from the append itself,
inside the transaction the row commits in. Whoever answers must only show it once that commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from colibri.core.database import Connection
from colibri.domains.log.appends import append_action
from colibri.domains.log.entries import LOCAL_PRINCIPAL
from colibri.domains.log.notary import default_origin

RECEIPT = "io.colibri/receipt"  # the `_meta` key of an answer's receipt


@dataclass(frozen=True, slots=True)
class Receipt:
    """One log entry, as an answer names it."""

    origin: str
    index: int
    leaf: bytes  # the entry hash

    def meta(self) -> dict[str, Any]:
        return {"origin": self.origin, "index": self.index, "leaf": self.leaf.hex()}


class ActionLog:
    """Appends a finished action to the log, as `log_action`, and returns its `Receipt`.

    `origin` is the one the log's checkpoints are signed for (COLIBRI_LOG_ORIGIN, the audit section's
    setting); None: `colibri/<the database's id>`, read once, at the first append."""

    def __init__(self, origin: str | None = None) -> None:
        self._origin = origin

    def __call__(  # noqa: PLR0917 - positional in the order the audit row holds them
        self,
        conn: Connection,
        sequence_no: int,
        correlation_id: str,
        tool: str,
        arguments: str,
        outcome: str,
        result_sha256: str | None,
        started_at: str,
        duration_ms: float | None,
        principal: str = LOCAL_PRINCIPAL,
        /,
    ) -> Receipt:
        index, entry = append_action(
            conn,
            sequence_no,
            correlation_id,
            tool,
            arguments,
            outcome,
            result_sha256,
            started_at,
            duration_ms,
            principal,
        )
        origin = self._origin
        if origin is None:
            origin = self._origin = default_origin(conn)
        return Receipt(origin, index, entry)
