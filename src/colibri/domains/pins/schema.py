"""The pins' tables: `tool_pins`, one row per `server.tool` the switchboard has listed, and
`pin_definitions`, the text of every definition ever pinned (SPEC §15, §21).

`tool_pins.sha256` is the SHA-256 of the JCS of the approved definition, and `definition` that JCS
text, so that a person can see what was approved; `pinned_by` who approved it (`first listing`
for the pin a tool gets the first time it is listed). `seen_*` hold a differing definition a later
listing showed, waiting for approval (NULL when there is none): approving it makes it the pin.

`digest_version` says which fields a digest covers: 1, the fields before SPEC §21 (name, title,
description, inputSchema, outputSchema, annotations); 2, everything a client is shown of a tool
(icons, `_meta` and execution too). Pins made before 0031 are version 1: the switchboard re-pins
them as version 2 the first time it lists their tool, when its version-1 digest still matches
(so an upgrade does not withhold every tool that has icons). `shown_sha256` is the listed digest
the last `pins show` displayed: `pins approve` without `--sha256` approves only that version.

`pin_definitions` keeps the text behind every digest a pin ever had (the digests the pin events of
the log name). A seen definition replaced by another before approval is not kept there: a server
that changes its tool at every listing must not grow the store without bound.
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
    ),
    Migration(
        "0031_pin_definitions",
        (
            "ALTER TABLE tool_pins ADD COLUMN digest_version INTEGER NOT NULL DEFAULT 1",
            "ALTER TABLE tool_pins ADD COLUMN seen_digest_version INTEGER",
            "ALTER TABLE tool_pins ADD COLUMN shown_sha256 TEXT",
            "UPDATE tool_pins SET seen_digest_version = 1 WHERE seen_sha256 IS NOT NULL",
            """CREATE TABLE pin_definitions (
                tool TEXT NOT NULL,
                sha256 TEXT NOT NULL,
                definition TEXT NOT NULL,
                digest_version INTEGER NOT NULL,
                pinned_at TEXT NOT NULL,
                pinned_by TEXT NOT NULL,
                PRIMARY KEY (tool, sha256)
            )""",
            "INSERT INTO pin_definitions (tool, sha256, definition, digest_version, pinned_at, pinned_by)"
            " SELECT tool, sha256, definition, 1, pinned_at, pinned_by FROM tool_pins",
        ),
    ),
]

# The same DDL runs on PostgreSQL.
POSTGRES_MIGRATIONS = MIGRATIONS
