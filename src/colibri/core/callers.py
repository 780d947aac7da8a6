"""Who is calling: the identity the server proved, and what its scope lets it run.

stdio calls come from the process that launched the server: principal `local` (`local:NAME`
with COLIBRI_PRINCIPAL), no limit. Over HTTP the principal is the name of the bearer token; a
`read` token runs only the tools READONLY would (system and read classes), whatever the mode
admits beyond them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from colibri.core.identity import Identity
from colibri.core.modes import ToolClass


class Classed(Protocol):
    """A tool as far as admission looks: its class (a `Tool`, or its kept declaration)."""

    @property
    def tool_class(self) -> ToolClass: ...


@dataclass(frozen=True, slots=True)
class Caller(Identity):
    """An `Identity` (principal, issuer, token_id: what the audit row records) and its scope."""

    scope: str = "write"  # "read" | "write"

    def admits(self, tool: Classed) -> bool:
        """False only for a write tool asked for by a read-scoped caller."""
        return self.scope != "read" or tool.tool_class is not ToolClass.WRITE


LOCAL_PRINCIPAL: Final = "local"  # stdio callers, and rows written before principals were kept
LOCAL: Final = Caller(LOCAL_PRINCIPAL)
