"""The `tool_pins` table: one row per `server.tool` the switchboard has listed (SPEC §15).

`sha256` is the SHA-256 of the JCS of the approved definition (name, title, description,
inputSchema, outputSchema, annotations), and `definition` that JCS text, so that a person can
see what was approved; `pinned_by` who approved it (`first listing` for the pin a tool gets the
first time it is listed). `seen_*` hold a differing definition a later listing showed, waiting
for approval (NULL when there is none): approving it makes it the pin.
"""

from __future__ import annotations

from colibri.storage import Migration

MIGRATIONS = [
    Migration(
        "0025_tool_pins",
        (
            """CREATE TABLE tool_pins (
                tool TEXT PRIMARY KEY,
                sha256 TEXT NOT NULL,
                definition TEXT NOT NULL,
                pinned_at TEXT NOT NULL,
                pinned_by TEXT NOT NULL,
                seen_sha256 TEXT,
                seen_definition TEXT,
                seen_at TEXT
            )""",
        ),
    )
]

# The same DDL runs on PostgreSQL.
POSTGRES_MIGRATIONS = MIGRATIONS
