"""The tool registry: what a tool is, and the catalogue of all of them."""

from colibri.tools.spec import ErrorPattern, Tool, ToolContext

__all__ = ["ErrorPattern", "Tool", "ToolContext"]
