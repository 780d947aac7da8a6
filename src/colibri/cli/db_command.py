"""The `colibri db` command's arguments (the copy itself lives in verifier/copy.py)."""

from __future__ import annotations

from typing import Any


def add_db_command(commands: Any) -> None:
    """`colibri db copy SRC DST` on the top-level subparsers `commands`."""
    db = commands.add_parser("db", help="whole-store operations")
    db_actions = db.add_subparsers(dest="db_action", required=True, metavar="ACTION")
    copy = db_actions.add_parser(
        "copy",
        help="copy a whole store between SQLite and PostgreSQL, then verify the copy",
        description="Copy every table of SRC into the empty store DST, keeping every id, seq, hash, "
        "seal and token; then check that every table matches and that the copy verifies.",
    )
    copy.add_argument("source", metavar="SRC", help="a SQLite file or a postgresql:// URL")
    copy.add_argument("destination", metavar="DST", help="a SQLite file or a postgresql:// URL (empty)")
