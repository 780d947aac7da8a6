"""How a face trusts an identity provider (SPEC §20): the issuer, the audience its tokens must
name, which claims hold the principal and its groups, and the scope names that mean read and write.

Built from `--oauth-*` options (`serve`, `ui`) or from the switchboard's `"auth": {"oauth": {…}}`;
`checked` refuses a malformed value with the option's or key's name, so the caller exits 2 with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

DEFAULT_READ_SCOPE = "colibri:read"
DEFAULT_WRITE_SCOPE = "colibri:write"
_CLAIM = re.compile(r"[A-Za-z0-9_.:/-]{1,128}")
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}")  # RFC 6749 §3.3 scope-token


class SettingError(ValueError):
    """An OAuth setting Colibri cannot use; `name` is the option or config key that holds it."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(f"{name}: {message}")


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """A client of the issuer (introspection, token exchange): its id and secret."""

    client_id: str
    client_secret: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    issuer: str
    audience: str | None = None  # None: the face's own public URL of /mcp
    principal_claim: str = "sub"
    groups_claim: str = "groups"
    read_scope: str = DEFAULT_READ_SCOPE
    write_scope: str = DEFAULT_WRITE_SCOPE
    introspection: ClientCredentials | None = None  # RFC 7662 for opaque tokens
    client: ClientCredentials | None = None  # the switchboard's own client (token exchange)

    @property
    def scopes(self) -> tuple[str, str]:
        return (self.read_scope, self.write_scope)

    def for_audience(self, audience: str) -> OAuthSettings:
        """These settings with `audience` where none was given."""
        return self if self.audience is not None else replace(self, audience=audience)


def checked_url(name: str, value: object, what: str) -> str:
    """`value` as an http(s) URL without a fragment, or a `SettingError` naming `name`."""
    if not isinstance(value, str) or not value:
        raise SettingError(name, f"expected {what} as an https:// URL, got {value!r}")
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.netloc or parts.fragment or parts.query:
        raise SettingError(
            name, f"expected {what} as an https:// URL with no query or fragment, got {value!r}"
        )
    return value


def checked(
    *,
    names: dict[str, str],
    issuer: object,
    audience: object = None,
    principal_claim: object = None,
    groups_claim: object = None,
    read_scope: object = None,
    write_scope: object = None,
    introspection: ClientCredentials | None = None,
    client: ClientCredentials | None = None,
) -> OAuthSettings:
    """Settings from raw values; `names` maps each field to the option or key a person wrote it as."""
    url = checked_url(names["issuer"], issuer, "the identity provider's issuer")
    aud = None if audience is None else checked_url(names["audience"], audience, "the audience")
    claims = {}
    for key, value, default in (
        ("principal_claim", principal_claim, "sub"),
        ("groups_claim", groups_claim, "groups"),
    ):
        if value is None:
            claims[key] = default
        elif isinstance(value, str) and _CLAIM.fullmatch(value):
            claims[key] = value
        else:
            raise SettingError(names[key], f"expected a claim name such as {default!r}, got {value!r}")
    scopes = {}
    for key, value, default in (
        ("read_scope", read_scope, DEFAULT_READ_SCOPE),
        ("write_scope", write_scope, DEFAULT_WRITE_SCOPE),
    ):
        if value is None:
            scopes[key] = default
        elif isinstance(value, str) and _SCOPE.fullmatch(value):
            scopes[key] = value
        else:
            raise SettingError(names[key], f"expected one scope name such as {default!r}, got {value!r}")
    if scopes["read_scope"] == scopes["write_scope"]:
        raise SettingError(names["write_scope"], "the write scope must differ from the read scope")
    return OAuthSettings(
        url,  # exactly as given: a token's `iss` must equal it (RFC 9068 §4)
        aud,
        claims["principal_claim"],
        claims["groups_claim"],
        scopes["read_scope"],
        scopes["write_scope"],
        introspection,
        client,
    )
