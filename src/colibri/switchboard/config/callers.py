"""Who a policy or a rate limit names (SPEC §20): a principal, or an IdP group as `group:NAME`.

The keys of `auth.policies` and `rate_limits.per_principal` are callers:

- a principal's name: a token's name (`ci-bot`), `local` (the caller on stdio), or a person as the
  identity provider's principal claim names them (`ana@example.com`);
- `group:NAME`: every caller whose IdP groups claim holds NAME (`group:sre`). NAME is the group as
  the identity provider writes it (`sre`, `/eng/sre`, `Site Reliability`): 1 to 256 characters, no
  control or bidirectional characters, no space at either end.

Any other name holding `:` is reserved (core/principals.py: `local:NAME` and IdP groups are the
gateway's own), so no caller of the switchboard has one: such a key is refused with its JSON path
rather than left to match nobody (`groups:sre`, `Group:sre`).
"""

from __future__ import annotations

from collections.abc import Iterable

from colibri.core.shown import LONGEST_NAME, quoted, shown
from colibri.switchboard.base import ConfigError, json_path

GROUP = "group:"  # a key naming an IdP group, `group:sre`


def check_callers(keys: Iterable[str], section: tuple[str, ...]) -> None:
    """Raise a ConfigError naming the first key of `section` that names no caller."""
    for key in keys:
        why = _problem(key)
        if why is not None:
            raise ConfigError(json_path((*section, key)), why)


def _problem(key: str) -> str | None:
    if key.startswith(GROUP):
        name = key.removeprefix(GROUP)
        if not name:
            return "expected group:NAME with the name of an IdP group after 'group:' (e.g. group:sre)"
        if len(name) > LONGEST_NAME or shown(name) != name or name.strip() != name:
            return (
                f"expected group:NAME, NAME an IdP group as its groups claim writes it: 1 to "
                f"{LONGEST_NAME} characters, no control or bidirectional characters, no space at either "
                f"end; got {quoted(key)}"
            )
        return None
    if not key:
        return "expected a principal's name (a token's, local, or a person's) or group:NAME"
    if ":" in key:
        return (
            f"{quoted(key)} is reserved: a name holding ':' is the gateway's own (local:NAME) unless it is "
            "an IdP group, written group:NAME (e.g. group:sre)"
        )
    return None
