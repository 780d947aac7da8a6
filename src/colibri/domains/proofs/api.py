"""What other domains may use of the proof store; nothing else of it is theirs to import."""

from __future__ import annotations

from colibri.domains.proofs.repository import Session, get_session
from colibri.domains.proofs.seals import SealCheck, compare, leaf_of_stored

__all__ = ["SealCheck", "Session", "compare", "get_session", "leaf_of_stored"]
