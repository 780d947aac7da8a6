"""The `approvals` table: one row per held call (SPEC §22), and 0035's `held` outcome of `actions`.

A row is the call as its approvers see it — who (`principal`), which tool, the arguments in full
(JCS, needed to judge them; dropped once the approval can no longer let a call through) and their
digest, the tool's definition as listed and its pin digest, the rule that held it (its JSON path
and the rule itself) and who may decide (`approvers`, principals or `group:NAME`) — and where it
stands: `pending`, then `approved` (usable once, until `expires_at`), `denied`, `used` (its one
call went through), `expired`, `interrupted` (the switchboard restarted while it was pending) or `unasked` (an
`ask_user` hold whose client cannot elicit).
`held_sequence_no` is the call's `held` row in `actions`. Times are the clock's ISO 8601 text,
which orders as time does.
"""

from __future__ import annotations

from colibri.storage import Migration
from colibri.storage.audit_held import POSTGRES as HELD_POSTGRES
from colibri.storage.audit_held import SQLITE as HELD_SQLITE

TABLE = """CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    correlation_id TEXT NOT NULL,
    held_sequence_no BIGINT,
    principal TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments_sha256 TEXT NOT NULL,
    arguments TEXT,
    pin_sha256 TEXT,
    definition TEXT,
    rule TEXT NOT NULL,
    approvers TEXT NOT NULL,
    mode TEXT NOT NULL,
    state TEXT NOT NULL,
    held_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    decided_by TEXT,
    decided_via TEXT,
    comment TEXT,
    decided_at TEXT,
    used_at TEXT
)"""

# The same DDL on both backends (BIGINT is an INTEGER to SQLite).
MIGRATIONS = [HELD_SQLITE, Migration("0035_approvals", (TABLE,))]
POSTGRES_MIGRATIONS = [HELD_POSTGRES, Migration("0035_approvals", (TABLE,))]
