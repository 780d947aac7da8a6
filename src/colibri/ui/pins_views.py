"""What the pins page shows (SPEC §21): every tool pin of the store, and for a changed one the
fields that differ, the unified diff of its pinned and seen definitions (the same diff as
`colibri switchboard pins show`) and the command that approves exactly that version.

A changed pin is `withheld` when the switchboard refused to serve it (its `switchboard:pins/changed`
event for that very digest carries the reason `withheld`: "pins": "block"), else `changed` (served
under "pins": "warn", or noted by a switchboard whose events this store lacks). The store does not
know the switchboard's config file: `colibri ui --switchboard-config FILE` names it for the command.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from colibri.core.database import Connection, Database
from colibri.core.reasons import WITHHELD
from colibri.domains.pins.api import Pin, all_pins, changed_fields, has_pins, unified_diff

PINS_CHANGED = "switchboard:pins/changed"  # the event a switchboard records when a pin's tool changes
NO_CONFIG = "FILE"  # in the command when `colibri ui` was not told the switchboard's config


@dataclass(frozen=True, slots=True)
class PinRow:
    """One pin as the page shows it."""

    pin: Pin
    state: str  # pinned, changed or withheld
    fields: list[str]  # the fields that differ (none while pinned)
    diff: list[str]  # the unified diff's lines, pinned -> seen (none while pinned)
    approve: str | None  # the command that approves the seen version


def store_has_pins(db: Database) -> bool:
    """Whether the header links the pins page: only a store a switchboard pinned tools in."""
    with db.snapshot() as conn:
        return _pins_kept(conn) and has_pins(conn)


def pins_page(db: Database, config: str | None) -> dict[str, Any]:
    with db.snapshot() as conn:
        pins = all_pins(conn) if _pins_kept(conn) else []
        withheld = _withheld(conn) if pins else set()
    rows = [_row(pin, withheld, config or NO_CONFIG) for pin in pins]
    return {"rows": rows, "config": config, "changed": sum(row.state != "pinned" for row in rows)}


def _row(pin: Pin, withheld: set[tuple[str, str]], config: str) -> PinRow:
    if pin.seen_sha256 is None or pin.seen_definition is None:
        return PinRow(pin, "pinned", [], [], None)
    diff = unified_diff(pin.tool, (pin.sha256, pin.definition), (pin.seen_sha256, pin.seen_definition))
    return PinRow(
        pin,
        "withheld" if (pin.tool, pin.seen_sha256) in withheld else "changed",
        changed_fields(pin.definition, pin.seen_definition),
        diff.split("\n"),
        f"colibri switchboard pins approve --config {config} {pin.tool} --sha256 {pin.seen_sha256}",
    )


def _pins_kept(conn: Connection) -> bool:
    # A store opened read-only is never migrated: one from before the pins has no such table, and
    # every page asks (for the header's link).
    return conn.execute(conn.dialect.table_exists, ("tool_pins",)).fetchone() is not None


def _withheld(conn: Connection) -> set[tuple[str, str]]:
    """(tool, listed digest) of every change a switchboard withheld, as its events recorded them."""
    columns = {str(row[0]) for row in conn.execute(conn.dialect.table_columns, ("actions",))}
    if "reason" not in columns:  # a store from before the reasons (0030) cannot tell
        return set()
    found = set()
    rows = conn.execute(
        "SELECT arguments FROM actions WHERE tool = ? AND reason = ?", (PINS_CHANGED, WITHHELD)
    )
    for (arguments,) in rows:
        event = json.loads(str(arguments))
        found.add((str(event.get("tool")), str(event.get("listed_sha256"))))
    return found
