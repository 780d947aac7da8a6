"""`colibri token create|list|revoke`: the bearer tokens in the database `colibri serve` uses.

The database is opened (and migrated) as FULL would, so tokens can be made before the first
`colibri serve --http`; every replica sharing the database then accepts them.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime

from colibri.core.errors import StorageError
from colibri.core.modes import Mode, writes_allowed
from colibri.domains import access
from colibri.runtime.boot import open_runtime_database
from colibri.runtime.config import Config, database_folder_problem
from colibri.serving.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from colibri.storage.postgres.urls import redact


def run_token(config: Config, action: str, name: str | None, scope: str, expires_days: int | None) -> int:
    if not writes_allowed(config.mode):
        config = Config(mode=Mode.FULL, db_path=config.db_path, db_sync=config.db_sync, db_url=config.db_url)
    store = store_name(config)
    missing = database_folder_problem(config)
    if missing is not None:
        print(f"colibri token: {missing}", file=sys.stderr)
        return EXIT_USAGE
    try:
        db = open_runtime_database(config)
    except StorageError as exc:
        print(f"colibri token: cannot open {store}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    try:
        if action == "create":
            assert name is not None
            token = access.create(db, name, access.Scope(scope), expires_days, time.time())
            print(token)
            print(
                f"colibri token: created {name!r} (scope {scope}) in {store};"
                " this is the only time it is shown",
                file=sys.stderr,
            )
        elif action == "revoke":
            assert name is not None
            access.revoke(db, name)
            print(f"colibri token: {name!r} revoked in {store}", file=sys.stderr)
        else:
            _print_list(access.list_tokens(db))
    except access.TokenError as exc:
        print(f"colibri token: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except StorageError as exc:
        print(f"colibri token: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        db.close()
    return EXIT_OK


def store_name(config: Config) -> str:
    """The store in use, for messages: the PostgreSQL URL without its password, or the SQLite file."""
    return redact(config.db_url) if config.db_url else str(config.db_path)


def _print_list(infos: list[access.TokenInfo]) -> None:
    now = time.time()
    print("NAME\tSCOPE\tSTATUS\tCREATED\tEXPIRES")
    for info in infos:
        expires = (
            "never" if info.expires_at is None else datetime.fromtimestamp(info.expires_at, UTC).isoformat()
        )
        print(f"{info.name}\t{info.scope}\t{info.status(now)}\t{info.created_at}\t{expires}")
