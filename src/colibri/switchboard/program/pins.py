"""`colibri switchboard pins list|show|approve --config FILE`: the tool pins of the config's audit store.

    pins list                  every pinned tool: pinned, or changed and waiting for approval, with
                               the fields that changed
    pins show SERVER.TOOL      its pin and, when it changed, a unified diff from the pinned to the
                               listed definition (pretty JSON) with both digests; the listed version
                               is noted as shown
    pins approve SERVER.TOOL   make its changed definition the pin — the version `--sha256` names, or
                               else the one the last `pins show` displayed — logged with the approver
                               (`--by` or the user running the command); a running switchboard
                               serves it again within a second

Exit codes: 0 done; 2 a bad config, no audit section, an unusable store, nothing to approve, or a
listed version other than the one given or shown (the message names both digests).
"""

from __future__ import annotations

import getpass
import re
import sys

from colibri.domains.pins.api import (
    NothingToApprove,
    NotTheReviewedVersion,
    Pin,
    changed_fields,
    pretty,
    unified_diff,
)
from colibri.serving.exits import EXIT_OK, EXIT_USAGE
from colibri.switchboard.audit import AuditStoreError, approve, show_pin, stored_pins
from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import AuditSpec, load

USAGE = (
    "usage: colibri switchboard pins list | pins show SERVER.TOOL"
    " | pins approve SERVER.TOOL [--sha256 HEX] [--by NAME] --config FILE"
)
_SHA256 = re.compile("[0-9a-f]{64}")


def pins_command(config_path: str, words: list[str], by: str | None, sha256: str | None = None) -> int:
    try:
        config = load(config_path)
    except ConfigError as exc:
        return _usage(f"{config_path}: {exc}")
    if config.audit is None:
        return _usage(f'{config_path} has no "audit" section: pins are kept in the audit store')
    if sha256 is not None and not _SHA256.fullmatch(sha256 := sha256.strip().lower()):
        return _usage(f"--sha256 takes the 64 hex digits of a digest `pins show` prints, not {sha256[:80]!r}")
    try:
        match words:
            case ["list"]:
                print(table(stored_pins(config.audit)), flush=True)
                return EXIT_OK
            case ["show", tool]:
                return _show(config.audit, config_path, tool)
            case ["approve", tool]:
                approver = by or getpass.getuser()
                before, after, index = approve(config.audit, tool, approver, sha256)
            case _:
                return _usage(USAGE)
    except (AuditStoreError, NothingToApprove, NotTheReviewedVersion) as exc:
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
    rows = [
        (
            "TOOL",
            "STATE",
            "CHANGED FIELDS",
            "PINNED SHA256",
            "PINNED BY",
            "PINNED AT",
            "LISTED SHA256 (CHANGED)",
        )
    ]
    for pin in pins:
        state = "changed, waiting for approval" if pin.changed else "pinned"
        fields = (
            ", ".join(changed_fields(pin.definition, pin.seen_definition)) if pin.seen_definition else "-"
        )
        rows.append(
            (pin.tool, state, fields, pin.sha256, pin.pinned_by, pin.pinned_at, pin.seen_sha256 or "-")
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def _show(spec: AuditSpec, config_path: str, tool: str) -> int:
    pin = show_pin(spec, tool)
    if pin is None:
        return _usage(f"{tool} has no pin; `colibri switchboard pins list` shows the pinned tools")
    pinned = f"pinned  sha256 {pin.sha256}  by {pin.pinned_by} at {pin.pinned_at}"
    if pin.seen_sha256 is None or pin.seen_definition is None:
        print(f"{pin.tool}: not changed since it was pinned\n{pinned}", *pretty(pin.definition), sep="\n")
        return EXIT_OK
    fields = ", ".join(changed_fields(pin.definition, pin.seen_definition))
    diff = unified_diff(pin.tool, (pin.sha256, pin.definition), (pin.seen_sha256, pin.seen_definition))
    print(
        f"{pin.tool}: changed since it was pinned (changed fields: {fields})",
        pinned,
        f"listed  sha256 {pin.seen_sha256}  seen at {pin.seen_at}",
        diff,
        f"to approve this version: colibri switchboard pins approve --config {config_path} {pin.tool} "
        f"--sha256 {pin.seen_sha256}",
        sep="\n",
        flush=True,
    )
    return EXIT_OK


def _usage(message: str) -> int:
    print(f"colibri switchboard pins: {message}", file=sys.stderr)
    return EXIT_USAGE
