"""Every tool and every migration, in one fixed order.

Adding a tool is declaring it, with its class, in its domain's `tools.py`; adding a table is a
migration in its domain's `schema.py`. Migrations apply in the order of their names' numbers,
which this module checks, so a domain can depend on tables an earlier number created.
Which tools a mode admits is derived from the tools' own classes (`admitted_tools`).
"""

from __future__ import annotations

from collections.abc import Iterable

from colibri.core.modes import Mode
from colibri.core.spec import Tool
from colibri.domains import access, approvals, log, pins, proofs, skills, system, tasks, trail
from colibri.storage import Migration
from colibri.storage.audit_log import MIGRATIONS as AUDIT_MIGRATIONS
from colibri.storage.audit_postgres import POSTGRES_MIGRATIONS as AUDIT_POSTGRES_MIGRATIONS
from colibri.storage.errors import SchemaError
from colibri.tools import snapshot

TOOLS: list[Tool] = [*system.TOOLS, *tasks.TOOLS, *trail.TOOLS, *proofs.TOOLS, *skills.TOOLS]
snapshot.adopt(TOOLS)  # their schemas as made when the models last changed, not made again here

MIGRATIONS: list[Migration] = sorted(
    [
        *AUDIT_MIGRATIONS,
        *tasks.MIGRATIONS,
        *proofs.MIGRATIONS,
        *trail.MIGRATIONS,
        *log.MIGRATIONS,
        *access.MIGRATIONS,
        *pins.MIGRATIONS,
        *approvals.MIGRATIONS,
    ],
    key=lambda migration: migration.name,
)

# The same tables and columns on PostgreSQL, in its DDL (each domain keeps both lists side by side).
POSTGRES_MIGRATIONS: list[Migration] = sorted(
    [
        *AUDIT_POSTGRES_MIGRATIONS,
        *tasks.POSTGRES_MIGRATIONS,
        *proofs.POSTGRES_MIGRATIONS,
        *trail.POSTGRES_MIGRATIONS,
        *log.POSTGRES_MIGRATIONS,
        *access.POSTGRES_MIGRATIONS,
        *pins.POSTGRES_MIGRATIONS,
        *approvals.POSTGRES_MIGRATIONS,
    ],
    key=lambda migration: migration.name,
)

# The migrations of each storage backend, by dialect name; a backend brings its own list.
MIGRATIONS_BY_BACKEND: dict[str, list[Migration]] = {"sqlite": MIGRATIONS, "postgres": POSTGRES_MIGRATIONS}


def admitted_tools(mode: Mode, tools: Iterable[Tool] = TOOLS) -> list[str]:
    """The names of the tools `mode` admits, in catalogue order."""
    return [tool.name for tool in tools if tool.admitted_in(mode)]


def migrations_for(backend: str) -> list[Migration]:
    """The ordered migrations of one backend (`Dialect.name`)."""
    try:
        return MIGRATIONS_BY_BACKEND[backend]
    except KeyError:
        raise SchemaError(f"no migrations for storage backend {backend!r}") from None
