"""`Pins`: against a downstream that silently changes what a tool does (SPEC §15).

The first time a tool is listed, the digest of its definition (digests.py) is pinned in the store
(`tool_pins`) and logged. When a later listing differs, the change is noted in the store (for
`colibri switchboard pins list`) and logged, and with `"pins": "block"` (the default) the tool is
withheld — not listed to anyone, and a call gets TOOL_CHANGED with both digests — until a person
approves it (`colibri switchboard pins approve`, itself logged with the approver). With "warn" it
is served, logged and flagged in `switchboard_status`; with "off" nothing is pinned.

The pins live in the store, so an approval made by the command reaches a running switchboard:
`follow()` reads them again every POLL_S and announces the tools that came back.

Each event is an `actions` row and log entry of its own, by principal `switchboard`:
`switchboard:pins/pin` (ok), `switchboard:pins/changed` (denied when withheld, ok when served),
`switchboard:pins/repin` (ok: a pin of digest version 1 whose digest version 2 differs, re-pinned
because its version-1 fields still match), with the tool and the digests as its arguments
(definitions are not secret; their texts are in `tool_pins` and `pin_definitions`).

What a person reads of a change — the fields that differ and a diff of the texts — comes from
`changed_fields` and `diffs()`: the diff goes to `/status` only, never into `switchboard_status`,
whose reader is an agent the changed text may have been written to mislead.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import anyio
import mcp_types as types

from colibri.core import ids
from colibri.core.clock import utc_now
from colibri.core.database import Connection, Database
from colibri.core.errors import StorageError
from colibri.core.reasons import WITHHELD
from colibri.domains.log.api import log_action
from colibri.domains.pins import api as pins
from colibri.domains.pins.api import DIGEST_VERSION
from colibri.storage.audit_log import EVENT, FinishedCall, insert_finished
from colibri.switchboard.audit.digests import definition, legacy_digest
from colibri.switchboard.audit.writer import Writer
from colibri.switchboard.base import TOOL_CHANGED
from colibri.switchboard.config import SwitchboardConfig
from colibri.switchboard.routing import Observer, Refusal, RoutedCall, Who

log = logging.getLogger("colibri.switchboard")

PINS_PRINCIPAL = "switchboard"  # the principal of the events the switchboard records itself
POLL_S = 1.0

Change = Callable[[Connection], bool]  # a change to tool_pins; True when it changed anything


class Pins(Observer):
    """The pinned definitions, the ones listed now, and what that withholds (see the module)."""

    def __init__(self, writer: Writer, mode: str, stored: list[pins.Pin], config_path: str) -> None:
        self._writer = writer
        self.mode = mode
        self._pins = {pin.tool: pin for pin in stored}
        self._listed: dict[str, str] = {}  # server.tool -> the digest of the definition listed now
        self._texts: dict[str, str] = {}  # server.tool -> the definition listed now
        self._repinned: dict[str, str] = {}  # server.tool -> the digest a version-1 pin got here
        self._seen: dict[str, Mapping[str, types.Tool]] = {}  # server -> the tools last looked at
        self._config_path = config_path
        self._lists_changed: Callable[[], None] = lambda: None

    # --- what is withheld -------------------------------------------------------------------------

    def changed(self, tool: str) -> pins.Pin | None:
        """The pin of `tool` when the definition listed now is another one."""
        pin, listed = self._pins.get(tool), self._listed.get(tool)
        if pin is None or listed is None or listed == pin.sha256:
            return None
        # A version-1 pin re-pinned here as this very definition: the store's copy (read again by
        # follow()) may lag while the write waits.
        repinned = pin.digest_version < DIGEST_VERSION and self._repinned.get(tool) == listed
        return None if repinned else pin

    def hides(self, principal: Who | None, name: str) -> str | None:
        if self.mode != "block" or (pin := self.changed(name)) is None:
            return None
        return f"{name} changed since it was pinned ({self._hint(pin, name)})"

    def admit(self, call: RoutedCall) -> Refusal | None:
        if self.mode != "block" or call.method != "tools/call" or (pin := self.changed(call.name)) is None:
            return None
        return Refusal(
            TOOL_CHANGED,
            f"{call.name} is withheld: its definition changed since it was pinned, and a person must approve "
            f"the change first ({self._hint(pin, call.name)})",
            {"pinned_sha256": pin.sha256, "listed_sha256": self._listed[call.name]},
        )

    def _hint(self, pin: pins.Pin, tool: str) -> str:
        command = f"colibri switchboard pins {{}} --config {self._config_path} {tool}"
        return (
            f"pinned sha256 {pin.sha256[:12]}..., listed {self._listed[tool][:12]}...; a person reviews it "
            f"with `{command.format('show')}` and approves it with "
            f"`{command.format('approve')} --sha256 {self._listed[tool]}`"
        )

    def report(self) -> dict[str, Any]:
        if self.mode == "off":
            return {}
        changed = [
            {
                "tool": tool,
                "pinned_sha256": pin.sha256,
                "listed_sha256": self._listed[tool],
                "changed_fields": pins.changed_fields(pin.definition, self._texts[tool]),
                "approve": f"colibri switchboard pins approve --config {self._config_path} {tool} "
                f"--sha256 {self._listed[tool]}",
            }
            for tool in sorted(self._listed)
            if (pin := self.changed(tool)) is not None
        ]
        key = "withheld_tools" if self.mode == "block" else "changed_tools"
        return {"pins": self.mode, key: changed}

    def diffs(self) -> dict[str, str]:
        """Each changed tool's unified diff from its pinned definition to the one listed now."""
        if self.mode == "off":
            return {}
        return {
            tool: pins.unified_diff(
                tool, (pin.sha256, pin.definition), (self._listed[tool], self._texts[tool])
            )
            for tool in sorted(self._listed)
            if (pin := self.changed(tool)) is not None
        }

    # --- the listings -----------------------------------------------------------------------------

    def attach(self, lists_changed: Callable[[], None]) -> None:
        self._lists_changed = lists_changed

    def reconfigured(self, config: SwitchboardConfig) -> None:
        if config.pins != self.mode:
            self.mode = config.pins
            self._lists_changed()

    def listed(self, server: str, tools: Mapping[str, types.Tool]) -> None:
        if self.mode == "off" or self._seen.get(server) is tools:
            return
        self._seen[server] = tools
        for name, tool in tools.items():
            full = f"{server}.{name}"
            text, sha256 = definition(tool)
            if self._listed.get(full) == sha256:
                continue
            self._listed[full], self._texts[full] = sha256, text
            pin = self._pins.get(full)
            # Once per tool and process: a copy of the pin read again before the re-pin was
            # written must not re-pin whatever is listed next.
            if (
                pin is not None
                and pin.digest_version < DIGEST_VERSION
                and full not in self._repinned
                and legacy_digest(tool) == pin.sha256
            ):
                self._repinned[full] = sha256
                self._repin(full, pin, sha256, text)
                continue
            if pin is None:
                self._pins[full] = pins.Pin(full, sha256, text, utc_now(), pins.FIRST_LISTING)
                self._record(full, "pin", {"sha256": sha256}, "ok", _pin_first(full, sha256, text))
            elif sha256 not in (pin.sha256, pin.seen_sha256):
                self._pins[full] = replace(pin, seen_sha256=sha256, seen_definition=text, seen_at=utc_now())
                withheld = self.mode == "block"
                log.warning(
                    "%s: the definition of %s changed since it was pinned (%s; sha256 %s -> %s); %s; "
                    "`colibri switchboard pins show --config %s %s` shows the diff",
                    server,
                    full,
                    "changed fields: " + ", ".join(pins.changed_fields(pin.definition, text)),
                    pin.sha256,
                    sha256,
                    "withheld until approved" if withheld else "served (pins: warn)",
                    self._config_path,
                    full,
                )
                digests = {"pinned_sha256": pin.sha256, "listed_sha256": sha256}
                outcome = "denied" if withheld else "ok"
                self._record(full, "changed", digests, outcome, _note(full, sha256, text))

    def _repin(self, tool: str, pin: pins.Pin, sha256: str, text: str) -> None:
        """A pin made by digest version 1 whose fields still match: pinned again as version 2, so
        an upgrade does not withhold every tool that has icons, `_meta` or execution."""
        self._pins[tool] = replace(pin, sha256=sha256, definition=text, digest_version=DIGEST_VERSION)
        change = _repinned(tool, pin.sha256, sha256, text)
        if sha256 == pin.sha256:  # it has none of the fields version 1 left out: same digest
            self._writer.submit(change, f"the digest version of the pin of {tool}")
            return
        log.info(
            "%s: pinned again as digest version %d (icons, _meta and execution now pinned too): "
            "its version-1 fields match the pin; sha256 %s -> %s",
            tool,
            DIGEST_VERSION,
            pin.sha256,
            sha256,
        )
        self._record(tool, "repin", {"previous_sha256": pin.sha256, "sha256": sha256}, "ok", change)

    def _record(
        self,
        tool: str,
        event: str,
        digests: dict[str, str],
        outcome: str,
        change: Callable[[Connection], bool],
    ) -> None:
        arguments = json.dumps({"tool": tool, **digests}, sort_keys=True, separators=(",", ":"))

        def work(conn: Connection) -> None:
            if change(conn):
                row = FinishedCall(
                    ids.correlation_id(),
                    f"switchboard:pins/{event}",
                    arguments,
                    EVENT,  # the switchboard's own doing, not a call (SPEC §21): a change withheld says so
                    None,
                    utc_now(),
                    0.0,
                    PINS_PRINCIPAL,
                    reason=WITHHELD if outcome == "denied" else None,
                )
                insert_finished(conn, row, log_action)

        self._writer.submit(work, f"the pin event {event} of {tool}")

    # --- approvals made elsewhere -------------------------------------------------------------------

    async def follow(self) -> None:
        """Read the pins again every POLL_S (an approval by the command); runs until cancelled."""
        while True:
            await anyio.sleep(POLL_S)
            try:
                stored = await self._writer.run(_all_pins)
            except StorageError as exc:
                log.warning("audit store: cannot read the tool pins: %s", exc)
                continue
            before = {tool for tool in self._listed if self.changed(tool)}
            self._pins = {pin.tool: pin for pin in stored}
            if {tool for tool in self._listed if self.changed(tool)} != before:
                self._lists_changed()


def _all_pins(db: Database) -> list[pins.Pin]:
    with db.snapshot() as conn:
        return pins.all_pins(conn)


def _pin_first(tool: str, sha256: str, text: str) -> Change:
    return lambda conn: pins.pin_first(conn, tool, sha256, text, utc_now(), version=DIGEST_VERSION)


def _note(tool: str, sha256: str, text: str) -> Change:
    return lambda conn: pins.note_change(conn, tool, sha256, text, utc_now(), version=DIGEST_VERSION)


def _repinned(tool: str, previous: str, sha256: str, text: str) -> Change:
    return lambda conn: pins.repin(
        conn, tool, previous, sha256, definition=text, at=utc_now(), version=DIGEST_VERSION
    )
