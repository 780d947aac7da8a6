"""The audited gateway (SPEC §15): every routed call in a Colibri store's signed log, and the pins
that guard against a downstream that silently changes what a tool does.

store.py     `open_store`: the store opened, checked, migrated and signed for at start; its duties
             (grouped writes, checkpoints, witnesses) and its close
writer.py    `Writer`: every write, at once on the event loop when the store allows, else grouped
             in the writer's thread (group commit)
rows.py      `Audit`, the observer that opens each attempt's row before it is sent and closes it
             before the answer leaves
digests.py   what a row keeps of a call: digests of the arguments and the answer, never the content
pins.py      `Pins`, the observer that pins each tool's definition and withholds a changed one
approval.py  `colibri switchboard pins list|show|approve`
approvals.py `Approvals`, the observer that holds a call until a person decides (SPEC §22)
asking.py    its `ask_user` mode: the caller's own user asked through an elicitation
decisions.py `colibri switchboard approvals list|approve|deny`
"""

from colibri.switchboard.audit.approval import APPROVE, approve, show_pin, stored_pins
from colibri.switchboard.audit.approvals import Approvals
from colibri.switchboard.audit.decisions import decide_held, held_calls
from colibri.switchboard.audit.pins import Pins
from colibri.switchboard.audit.rows import Audit, AuditFailed
from colibri.switchboard.audit.store import AuditStore, AuditStoreError, StoreOptions, open_store
from colibri.switchboard.base import TOOL_CHANGED

__all__ = [
    "APPROVE",
    "TOOL_CHANGED",
    "Approvals",
    "Audit",
    "AuditFailed",
    "AuditStore",
    "AuditStoreError",
    "Pins",
    "StoreOptions",
    "approve",
    "decide_held",
    "held_calls",
    "open_store",
    "show_pin",
    "stored_pins",
]
