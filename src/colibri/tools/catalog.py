"""Every tool and every migration, in one fixed order.

Adding a tool is declaring it in its domain's `tools.py`; adding a table is a migration
in its domain's `schema.py`. Migrations apply in the order of their names' numbers, which
this module checks, so a domain can depend on tables an earlier number created.
"""

from __future__ import annotations

from colibri.chain.audit_log import MIGRATIONS as AUDIT_MIGRATIONS
from colibri.domains import log, proofs, skills, system, tasks, trail
from colibri.storage import Migration
from colibri.tools.spec import Tool

TOOLS: list[Tool] = [*system.TOOLS, *tasks.TOOLS, *trail.TOOLS, *proofs.TOOLS, *skills.TOOLS]

MIGRATIONS: list[Migration] = sorted(
    [*AUDIT_MIGRATIONS, *tasks.MIGRATIONS, *proofs.MIGRATIONS, *trail.MIGRATIONS, *log.MIGRATIONS],
    key=lambda migration: migration.name,
)
