"""Identifiers Colibri makes up itself, each in one place."""

from __future__ import annotations

import uuid


def correlation_id() -> str:
    """A fresh UUID4 for one call's audit row (SPEC §1.5)."""
    return str(uuid.uuid4())


def session_id() -> str:
    """A generated audit session id, for audit_session_start without one."""
    return f"session-{uuid.uuid4().hex[:16]}"
