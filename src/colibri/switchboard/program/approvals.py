"""`colibri switchboard approvals list | approve ID | deny ID [--comment TEXT] [--by PRINCIPAL] --config F`:
the calls held for a person's decision in the config's audit store (SPEC §22).

    approvals list         one line per held call: its ID, principal, tool, arguments digest and the
                           arguments (`--json`: one JSON array, for machines)
    approvals approve ID   let that one call through (its identical retry, within ttl_s, if its
                           client stopped waiting), as `--by` (default: the user running the
                           command), recorded with `via: cli`
    approvals deny ID      refuse it: its client gets APPROVAL_DENIED with the comment

Only a principal the call's rule names as an approver may decide, never the caller itself. Every
decision, and every refused one, is a log entry naming who decided, the call's digest and the
comment. Exit codes: 0 done; 2 a bad config, no audit section, an unusable store, or a decision
refused (an unknown, expired or decided ID, the caller's own call, not an approver: the message
says which).
"""

from __future__ import annotations

import getpass
import json
import sys

from colibri.core.shown import shown
from colibri.domains.approvals.api import Approval, NotDecidable
from colibri.serving.exits import EXIT_OK, EXIT_USAGE
from colibri.switchboard.audit import AuditStoreError, decide_held, held_calls
from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import load

SHOWN_WHOLE = 1_000_000  # the arguments are shown in full: an approver judges all of them
USAGE = (
    "usage: colibri switchboard approvals list [--json] | approvals approve ID | approvals deny ID"
    " [--comment TEXT] [--by PRINCIPAL] --config FILE"
)


def approvals_command(
    config_path: str, words: list[str], by: str | None, comment: str | None, as_json: bool
) -> int:
    try:
        config = load(config_path)
    except ConfigError as exc:
        return _usage(f"{config_path}: {exc}")
    if config.audit is None:
        return _usage(f'{config_path} has no "audit" section: held calls are kept in the audit store')
    try:
        match words:
            case ["list"]:
                held = held_calls(config.audit)
                print(
                    json.dumps([_json(call) for call in held], indent=2) if as_json else _lines(held),
                    flush=True,
                )
                return EXIT_OK
            case ["approve" | "deny" as action, approval_id]:
                decider = by or getpass.getuser()
                approval = decide_held(config.audit, approval_id, action == "approve", decider, comment or "")
            case _:
                return _usage(USAGE)
    except AuditStoreError as exc:
        return _usage(str(exc))
    except NotDecidable as exc:
        return _usage(f"{exc} (refused: {exc.why}; the attempt is logged)")
    done = "approved" if approval.state == "approved" else "denied"
    print(
        f"{done} {approval.id}: {approval.principal}'s {approval.tool} (arguments sha256 "
        f"{approval.arguments_sha256}), by {approval.decided_by}"
        + (f": {approval.comment}" if approval.comment else ""),
        flush=True,
    )
    return EXIT_OK


def _lines(held: list[Approval]) -> str:
    if not held:
        return "no call is held for approval"
    # A caller's and a downstream's text: controls and bidi characters escaped, never obeyed.
    return "\n".join(
        f"{call.id}  {shown(call.principal)}  {shown(call.tool)}  sha256:{call.arguments_sha256}  "
        f"{shown(call.arguments or '{}', SHOWN_WHOLE)}"
        for call in held
    )


def _json(call: Approval) -> dict[str, object]:
    return {
        "id": call.id,
        "principal": call.principal,
        "tool": call.tool,
        "arguments_sha256": call.arguments_sha256,
        "arguments": None if call.arguments is None else json.loads(call.arguments),
        "pin_sha256": call.pin_sha256,
        "rule": json.loads(call.rule),
        "approvers": list(call.approvers),
        "mode": call.mode,
        "held_at": call.held_at,
        "expires_at": call.expires_at,
    }


def _usage(message: str) -> int:
    print(f"colibri switchboard approvals: {message}", file=sys.stderr)
    return EXIT_USAGE
