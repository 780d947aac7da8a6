"""ζ decision trail (SPEC §5): hash-chained thought records and chain verification."""

from colibri.domains.trail.schema import MIGRATIONS, POSTGRES_MIGRATIONS
from colibri.domains.trail.tools import TOOLS

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS", "TOOLS"]
