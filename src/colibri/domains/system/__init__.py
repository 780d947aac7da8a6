"""α/γ system tools: `server_ping` and `server_health` (SPEC §3)."""

from colibri.domains.system.tools import TOOLS

__all__ = ["TOOLS"]
