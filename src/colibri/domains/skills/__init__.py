"""ε skill registry (SPEC §6): SKILL.md discovery, validation and caching."""

from colibri.domains.skills.schema import MIGRATIONS
from colibri.domains.skills.tools import TOOLS

__all__ = ["MIGRATIONS", "TOOLS"]
