"""`"auth": {"oauth": {…}}`: the identity provider whose access tokens `switchboard --http` accepts
beside its tokens file, and the switchboard's own client at it (SPEC §20).

    "oauth": {"issuer": URL, "audience": URL, "principal_claim": "email", "groups_claim": "groups",
              "read_scope": "colibri:read", "write_scope": "colibri:write",
              "client_id": "gateway", "client_secret": "${GATEWAY_SECRET}", "introspection": true}

The keys are `colibri serve`'s `--oauth-*` options. `client_id` and `client_secret` (a `${VAR}`
reference, expanded from the environment so the secret stays out of the file) are the switchboard's
own client at the issuer: for RFC 8693 token exchange (`"identity": "exchange"` downstreams) and,
with `"introspection": true`, for RFC 7662 introspection of opaque tokens. Each problem is a
ConfigError naming its JSON path.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from colibri.serving.oauth import ClientCredentials, OAuthSettings
from colibri.serving.oauth.settings import SettingError, checked
from colibri.switchboard.base import ConfigError, json_path
from colibri.switchboard.config.expand import expand

WHERE = ("auth", "oauth")
SETTINGS = ("issuer", "audience", "principal_claim", "groups_claim", "read_scope", "write_scope")
KEYS = (*SETTINGS, "client_id", "client_secret", "introspection")


def oauth_settings(raw: object, environ: Mapping[str, str]) -> OAuthSettings:
    """The settings of `auth.oauth` (the client secret kept out of every repr)."""
    if not isinstance(raw, dict):
        raise ConfigError(
            json_path(WHERE), f'expected an object with at least "issuer", got {type(raw).__name__}'
        )
    for key in raw:
        if key not in KEYS:
            close = difflib.get_close_matches(str(key), KEYS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; expected one of {', '.join(KEYS)}"
            raise ConfigError(json_path((*WHERE, key)), f"unknown key{hint}")
    if "issuer" not in raw:
        raise ConfigError(
            json_path((*WHERE, "issuer")), "required key is missing: the identity provider's issuer URL"
        )
    client = _client(raw, environ)
    introspection = raw.get("introspection", False)
    if not isinstance(introspection, bool):
        raise ConfigError(
            json_path((*WHERE, "introspection")), f"expected true or false, got {introspection!r}"
        )
    if introspection and client is None:
        raise ConfigError(
            json_path((*WHERE, "introspection")),
            'needs "client_id" and "client_secret": introspection asks as that client',
        )
    try:
        settings = checked(
            names={key: json_path((*WHERE, key)) for key in SETTINGS},
            issuer=raw.get("issuer"),
            audience=raw.get("audience"),
            principal_claim=raw.get("principal_claim"),
            groups_claim=raw.get("groups_claim"),
            read_scope=raw.get("read_scope"),
            write_scope=raw.get("write_scope"),
            introspection=client if introspection else None,
            client=client,
        )
    except SettingError as exc:
        raise ConfigError(exc.name, str(exc).removeprefix(f"{exc.name}: ")) from None
    return settings


def _client(raw: dict[str, Any], environ: Mapping[str, str]) -> ClientCredentials | None:
    if raw.get("client_id") is None and raw.get("client_secret") is None:
        return None
    client_id, secret = _text(raw, "client_id", "client_secret"), _text(raw, "client_secret", "client_id")
    if "${" not in secret:
        raise ConfigError(
            json_path((*WHERE, "client_secret")),
            'expected a ${VAR} reference such as "${GATEWAY_CLIENT_SECRET}": a secret stays out of the file',
        )
    return ClientCredentials(
        expand(client_id, (*WHERE, "client_id"), environ), expand(secret, (*WHERE, "client_secret"), environ)
    )


def _text(raw: dict[str, Any], key: str, other: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(json_path((*WHERE, key)), f"expected a non-empty string (it goes with {other})")
    return value
