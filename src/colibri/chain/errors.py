"""Errors the chain itself raises (Pattern A codes).

ChainError
├── UnknownTool        UNKNOWN_TOOL       no tool by that name
├── ToolNotAdmitted    TOOL_NOT_ADMITTED  the tool exists but not in this mode
├── InvalidParams      INVALID_PARAMS     arguments are not an object, or fail the model
└── HandlerError       HANDLER_ERROR      the handler raised
"""

from __future__ import annotations

from typing import Any


class ChainError(Exception):
    """A refusal by the chain; carries its Pattern A code and details."""

    code = "HANDLER_ERROR"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class UnknownTool(ChainError):
    """No tool by that name."""

    code = "UNKNOWN_TOOL"


class ToolNotAdmitted(ChainError):
    """The tool exists but the effective mode does not admit it."""

    code = "TOOL_NOT_ADMITTED"


class InvalidParams(ChainError):
    """Arguments are not an object or fail the tool's input model."""

    code = "INVALID_PARAMS"


class HandlerError(ChainError):
    """The handler raised."""

    code = "HANDLER_ERROR"
