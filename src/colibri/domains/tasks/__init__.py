"""β task pipeline (SPEC §4): tasks, dependencies, the state machine, next actions."""

from colibri.domains.tasks.schema import MIGRATIONS, POSTGRES_MIGRATIONS
from colibri.domains.tasks.tools import TOOLS

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS", "TOOLS"]
