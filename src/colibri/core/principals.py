"""Who a call is by: a principal is a plain string, the name of a token (or of a person, SPEC §20).

A few names are the gateway's own and no token may take them, or a token's calls could pass for
them in the audit and in the policies keyed on them: `local` (the caller on stdio, unauthenticated),
`switchboard` (the switchboard's own events: pins, approvals) and any name holding `:` (kept for
`local:NAME` on stdio and IdP groups such as `group:sre`).
"""

from __future__ import annotations

RESERVED = ("local", "switchboard")


def reserved(name: str) -> str | None:
    """Why `name` may not name a token, or None when it may."""
    if name in RESERVED or ":" in name:
        return (
            f"the name {name!r} is reserved (local, switchboard and any name holding ':' name the "
            "gateway's own callers and groups)"
        )
    return None
