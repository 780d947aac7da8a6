"""η proof store (SPEC §5): audit sessions and RFC 9162 Merkle seals.

An auditor checks an inclusion proof with `verify_proof` (or the lower-level
`verify_inclusion`) from `colibri.domains.proofs.merkle`, which needs no database.
"""

from colibri.domains.proofs.schema import MIGRATIONS, POSTGRES_MIGRATIONS
from colibri.domains.proofs.tools import TOOLS

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS", "TOOLS"]
