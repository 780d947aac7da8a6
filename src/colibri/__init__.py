"""Colibri: an audited MCP runtime and a health-aware MCP gateway."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("colibri-mcp")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
