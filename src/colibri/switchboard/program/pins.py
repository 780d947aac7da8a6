"""`colibri switchboard pins list|approve --config FILE`: the tool pins of the config's audit store.

    pins list                  every pinned tool: pinned, or changed and waiting for approval
    pins approve SERVER.TOOL   make its changed definition the pin (logged with the approver, `--by`
                               or the user running the command); a running switchboard serves it
                               again within a second

Exit codes: 0 done, 2 a bad config, no audit section, an unusable store, or nothing to approve.
"""

from __future__ import annotations

import getpass
import sys

from colibri.domains.pins.api import NothingToApprove, Pin
from colibri.serving.exits import EXIT_OK, EXIT_USAGE
from colibri.switchboard.audit import AuditStoreError, approve, stored_pins
from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import load

USAGE = "usage: colibri switchboard pins list | pins approve SERVER.TOOL [--by NAME] --config FILE"


def pins_command(config_path: str, words: list[str], by: str | None) -> int:
    try:
        config = load(config_path)
    except ConfigError as exc:
        return _usage(f"{config_path}: {exc}")
    if config.audit is None:
        return _usage(f'{config_path} has no "audit" section: pins are kept in the audit store')
    try:
        match words:
            case ["list"]:
                print(table(stored_pins(config.audit)), flush=True)
                return EXIT_OK
            case ["approve", tool]:
                approver = by or getpass.getuser()
                before, after, index = approve(config.audit, tool, approver)
            case _:
                return _usage(USAGE)
    except (AuditStoreError, NothingToApprove) as exc:
        return _usage(str(exc).strip("'\""))
    print(
        f"approved {tool}: sha256 {before.sha256} -> {after.sha256}, by {approver}; "
        f"logged as entry {index} of the audit store's log",
        flush=True,
    )
    return EXIT_OK


def table(pins: list[Pin]) -> str:
    if not pins:
        return "no tool is pinned yet (a switchboard pins each tool the first time it lists it)"
    rows = [("TOOL", "STATE", "PINNED SHA256", "PINNED BY", "PINNED AT", "LISTED SHA256 (CHANGED)")]
    for pin in pins:
        state = "changed, waiting for approval" if pin.changed else "pinned"
        rows.append((pin.tool, state, pin.sha256, pin.pinned_by, pin.pinned_at, pin.seen_sha256 or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def _usage(message: str) -> int:
    print(f"colibri switchboard pins: {message}", file=sys.stderr)
    return EXIT_USAGE
