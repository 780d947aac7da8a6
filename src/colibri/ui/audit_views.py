"""What the audit's pages show: the calls, newest first, and one call opened to its proof.

The store of the switchboard's audited gateway (SPEC §15) is a normal Colibri store whose tools
are named `server.tool`: these pages read it like any other.
"""

from __future__ import annotations

from typing import Any

from colibri.core.database import Database
from colibri.domains.log.note import Verifier
from colibri.storage.audit_read import get_action, list_actions
from colibri.ui.call_proof import call_proof
from colibri.ui.checkpoints import key_id, recorded_verifier

PAGE = 50


def tool_pattern(tool: str) -> str:
    """The LIKE pattern of the audit's tool filter: a glob (`*` any characters, `?` one) when it
    has a wildcard, else a prefix (`github.` is every tool of the server `github`); any case."""
    literal = tool.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    if "*" in tool or "?" in tool:
        return literal.replace("*", "%").replace("?", "_")
    return literal + "%"


def audit_page(
    db: Database, before: int | None, filters: dict[str, str | None], events: bool = False
) -> dict[str, Any]:
    """A page of audited calls, newest first, with the filters given (the tool's: `tool_pattern`).
    The switchboard's own events (pins, approvals: outcome `event`) are shown only with `events`
    or when the outcome filter asks for them (SPEC §21): dozens of pin rows would bury the calls."""
    tool = filters.get("tool")
    exact = {name: value for name, value in filters.items() if name != "tool"}
    with db.snapshot() as conn:
        rows = list_actions(
            conn,
            before=before,
            limit=PAGE + 1,
            tool_like=None if tool is None else tool_pattern(tool),
            events=events or filters.get("outcome") == "event",
            **exact,
        )
    more = len(rows) > PAGE
    rows = rows[:PAGE]
    return {
        "actions": rows,
        "before": rows[-1].sequence_no if more else None,
        "filters": filters,
        "given": [(name, value) for name, value in filters.items() if value],
        "events": events,
    }


def call_page(db: Database, sequence_no: int, verifier: Verifier | None) -> dict[str, Any] | None:
    """One call with every stored field, its log entry and its inclusion proof (None: no such call).

    The checkpoint's signature is checked with `verifier` (--verifier-key), else with the key the
    store records for its latest checkpoint, and the page says which."""
    with db.snapshot() as conn:
        action = get_action(conn, sequence_no)
        if action is None:
            return None
        key = verifier or recorded_verifier(conn)
        proof = call_proof(conn, action, key)
    return {
        "action": action,
        "proof": proof,
        "verifier": key,
        "verifier_key": None if key is None else key.key(),
        "verifier_id": key_id(key),
        "verifier_given": verifier is not None,
    }


def proof_bundle(db: Database, sequence_no: int, verifier: Verifier | None) -> dict[str, Any] | str | None:
    """The downloadable proof of call `sequence_no`: the JSON object, or why there is none (text),
    or None when there is no such call."""
    page = call_page(db, sequence_no, verifier)
    if page is None:
        return None
    proof = page["proof"]
    if proof.missing is not None:
        return str(proof.missing)
    return dict(proof.bundle(page["verifier"]))
