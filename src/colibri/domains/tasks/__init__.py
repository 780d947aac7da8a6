"""β task pipeline (SPEC §4): tasks, dependencies, the state machine, next actions."""

from colibri.domains.tasks.schema import MIGRATIONS
from colibri.domains.tasks.tools import TOOLS

__all__ = ["MIGRATIONS", "TOOLS"]
