"""Database URLs as people see them: which backend a target names, and a URL without its password.

Importing this module loads nothing of psycopg (the package's `__init__` imports only this), so
naming a store never loads its driver: `serve` on SQLite imports no psycopg at all (SPEC §18).
"""

from __future__ import annotations


def is_postgres_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(("postgresql://", "postgres://"))


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    import psycopg  # only ever asked about a PostgreSQL URL, whose backend loads psycopg anyway
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
        return "postgresql://(unparsable URL)"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"
