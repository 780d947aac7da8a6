from __future__ import annotations

from colibri.tools.spec import Tool

TOOLS: list[Tool] = []
