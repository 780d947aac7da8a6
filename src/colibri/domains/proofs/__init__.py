"""η proof store (SPEC §5): audit sessions and RFC 9162 Merkle seals."""

from colibri.domains.proofs.schema import MIGRATIONS
from colibri.domains.proofs.tools import TOOLS

__all__ = ["MIGRATIONS", "TOOLS"]
