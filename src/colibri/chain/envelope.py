"""The one place where results and errors become response envelopes (SPEC §1.6).

`to_json` (core/envelope_text.py) is their text form, shared with the switchboard.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel

from colibri.chain.errors import ChainError, HandlerError
from colibri.chain.types import Envelope
from colibri.core.errors import DomainError
from colibri.core.spec import ErrorPattern, Tool
from colibri.storage.errors import BusyError, UnavailableError


def success(data: BaseModel | dict[str, Any]) -> Envelope:
    payload = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
    return {"ok": True, "data": payload}


def chain_error(error: ChainError) -> Envelope:
    return {"ok": False, "error": {"code": error.code, "message": error.message, "details": error.details}}


def from_exception(exc: Exception, tool: Tool) -> Envelope:
    """Map whatever a handler raised: a domain refusal carries its own code (SESSION_NOT_FOUND, ...)
    in the tool's pattern, as the Pattern A envelope's code or inside a Pattern B success; anything
    else is HANDLER_ERROR."""
    if isinstance(exc, DomainError):
        if tool.pattern is ErrorPattern.B:
            return success({"ok": False, "error": {"code": exc.code, "message": exc.message, **exc.details}})
        return {"ok": False, "error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    if isinstance(exc, ChainError):
        return chain_error(exc)
    message = str(exc) or type(exc).__name__
    if isinstance(exc, BusyError | UnavailableError):
        # The database was locked too long or could not be reached: the same call may well pass.
        return chain_error(HandlerError(message, exception=type(exc).__name__, retryable=True))
    return chain_error(HandlerError(message, exception=type(exc).__name__))


def is_error(envelope: Envelope) -> bool:
    return envelope.get("ok") is not True


def outcome(envelope: Envelope) -> str:
    """`error` for Pattern A and for Pattern B refusals; `ok` otherwise."""
    if is_error(envelope):
        return "error"
    data = envelope.get("data")
    return "error" if isinstance(data, dict) and data.get("ok") is False else "ok"


def digest_of(data: bytes) -> str:
    """The result hash of an envelope's UTF-8 text (the audit row's `result_hash`)."""
    return hashlib.sha256(data).hexdigest()
