"""A call's place in the verifiable log and its inclusion proof against the latest checkpoint.

What `/audit/<id>` shows and `/audit/<id>/proof.json` hands out (SPEC §14): the entry the log
holds for the call, whether the call's row as stored still yields that entry (SPEC §11's JCS
object), and the RFC 9162 audit path from it to the root of the latest checkpoint, checked here
too. The downloaded file carries the checkpoint note with its witnesses' cosignatures, so that
code that trusts only a verifier key kept elsewhere can check it offline.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

from colibri.core.database import Connection
from colibri.domains.log import locate, tree
from colibri.domains.log.cosigned import cosignature_lines, with_cosignatures
from colibri.domains.log.entries import stored_action_entry
from colibri.domains.log.note import Verifier
from colibri.domains.log.store import latest_checkpoint
from colibri.domains.proofs.merkle import verify_inclusion
from colibri.storage.audit_read import StoredAction
from colibri.ui.checkpoints import ShownCheckpoint, shown_checkpoint

FORMAT = "colibri-call-inclusion/v1"
HOW_TO_CHECK = (
    "1. entry_hash is the SHA-256 of the RFC 8785 (JCS) bytes of entry. "
    "2. audit_path proves entry_hash is leaf log_index of a tree of tree_size leaves (RFC 9162 2.1.3.2; "
    "the leaf hash is SHA-256(0x00 || entry_hash)). "
    "3. That tree's root and size are the ones checkpoint states (its third and second lines). "
    "4. checkpoint's signature opens under the log's verifier key (C2SP signed-note, Ed25519): use a key "
    "you keep elsewhere, not only the one named here; the lines after the log's own are witnesses' "
    "cosignatures (C2SP tlog-cosignature)."
)


@dataclass(frozen=True, slots=True)
class CallProof:
    """What the log says of one call; `missing` says why there is no proof when there is none."""

    entry: dict[str, Any]  # SPEC §11's object, from the row as stored now
    log_index: int | None = None
    entry_hash: str | None = None  # as the log holds it
    row_matches: bool | None = None  # whether the row still yields the logged entry
    checkpoint: ShownCheckpoint | None = None
    note: str | None = None  # the checkpoint's note, cosignatures included
    witnesses: tuple[str, ...] = ()  # the names on the checkpoint's cosignature lines
    audit_path: list[str] = field(default_factory=list)
    proof_ok: bool | None = None
    missing: str | None = None

    def bundle(self, verifier: Verifier | None) -> dict[str, Any]:
        """The downloadable proof (only when there is one)."""
        assert self.checkpoint is not None and self.log_index is not None
        return {
            "format": FORMAT,
            "log_index": self.log_index,
            "tree_size": self.checkpoint.size,
            "entry": self.entry,
            "entry_hash": self.entry_hash,
            "audit_path": self.audit_path,
            "checkpoint": self.note,
            "verifier_key": None if verifier is None else verifier.key(),
            "how_to_check": HOW_TO_CHECK,
        }


def entry_of(action: StoredAction) -> dict[str, Any]:
    """The object whose JCS bytes hash to the call's log entry (SPEC §11), from the stored row."""
    return {
        "type": "action",
        "sequence_no": action.sequence_no,
        "correlation_id": action.correlation_id,
        "tool": action.tool,
        "principal": action.principal,
        "arguments_sha256": hashlib.sha256(action.arguments.encode()).hexdigest(),
        "outcome": action.outcome,
        "result_sha256": action.result_hash,
        "started_at": action.started_at,
        "duration_ms": action.duration_ms,
    }


def call_proof(conn: Connection, action: StoredAction, verifier: Verifier | None) -> CallProof:
    """The call's entry, and its proof against the latest checkpoint when the log covers it."""
    entry = entry_of(action)
    if action.outcome == "running":
        return CallProof(entry, missing="the call has not finished; it is logged when it does")
    if conn.execute(conn.dialect.table_exists, ("log_entries",)).fetchone() is None:
        return CallProof(entry, missing="this store has no verifiable log (it predates it)")
    finished = locate.finished(action.started_at, action.duration_ms)
    index = locate.action_index(conn, action.sequence_no, finished)
    if index is None:
        return CallProof(
            entry,
            missing="no log entry holds this call: the log was altered; check it with "
            "`colibri verify --checkpoint`",
        )
    logged = tree.entry_hash(conn, index)
    row_entry = stored_action_entry(
        action.sequence_no,
        action.correlation_id,
        action.tool,
        action.principal,
        action.arguments,
        action.outcome,
        action.result_hash,
        action.started_at,
        action.duration_ms,
    )
    found = CallProof(entry, index, logged.hex(), row_entry == logged)
    latest = latest_checkpoint(conn)
    if latest is None or latest.size <= index:
        size = (
            "no checkpoint yet" if latest is None else f"the latest checkpoint covers {latest.size} entries"
        )
        return replace(found, missing=f"logged at index {index}; {size}: the next checkpoint will cover it")
    try:
        path = tree.inclusion_path(conn, index, latest.size)
    except LookupError as exc:  # a stored node is gone: only an altered log lacks one
        return replace(found, missing=str(exc))
    lines = cosignature_lines(conn, latest.id) if _has_cosignatures(conn) and latest.id else []
    return replace(
        found,
        checkpoint=shown_checkpoint(latest, verifier),
        note=with_cosignatures(latest.note, lines),
        witnesses=tuple(_signer_name(line) for line in lines),
        audit_path=[node.hex() for node in path],
        proof_ok=verify_inclusion(logged, index, latest.size, path, latest.root),
    )


def _signer_name(line: str) -> str:
    """The key name of a signature line (`— NAME BASE64`)."""
    parts = line.split(" ")
    return parts[1] if len(parts) == 3 else line.strip()[:60]


def _has_cosignatures(conn: Connection) -> bool:
    return conn.execute(conn.dialect.table_exists, ("log_cosignatures",)).fetchone() is not None
