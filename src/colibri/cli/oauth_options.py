"""The `--oauth-*` options of `colibri serve --http` and `colibri ui` (SPEC §20): which identity
provider's access tokens the face accepts beside Colibri's own.

The issuer may come from `COLIBRI_OAUTH_ISSUER`; an introspection client's secret comes only from
`COLIBRI_OAUTH_CLIENT_SECRET` (a secret on the command line is readable by every user in `ps`).
A malformed value is refused before anything starts, naming the option (exit 2).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from colibri.serving.oauth import OAuthSettings

SECRET_VARIABLE = "COLIBRI_OAUTH_CLIENT_SECRET"
ISSUER_VARIABLE = "COLIBRI_OAUTH_ISSUER"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("OAuth (tokens from the team's identity provider, SPEC §20)")
    group.add_argument(
        "--oauth-issuer",
        metavar="URL",
        help=f"accept access tokens of this issuer beside Colibri's own tokens (or {ISSUER_VARIABLE})",
    )
    group.add_argument(
        "--oauth-audience",
        metavar="URL",
        help="the audience its tokens must name (default: this server's /mcp URL)",
    )
    group.add_argument(
        "--oauth-principal-claim",
        metavar="CLAIM",
        help="the claim naming the principal (default: sub; e.g. email)",
    )
    group.add_argument(
        "--oauth-groups-claim",
        metavar="CLAIM",
        help="the claim listing the principal's groups (default: groups)",
    )
    group.add_argument(
        "--oauth-read-scope", metavar="SCOPE", help="the scope that reads (default: colibri:read)"
    )
    group.add_argument(
        "--oauth-write-scope", metavar="SCOPE", help="the scope that writes (default: colibri:write)"
    )
    group.add_argument(
        "--oauth-introspection-client",
        metavar="CLIENT_ID",
        help=f"check opaque tokens by introspection (RFC 7662) as this client; its secret: {SECRET_VARIABLE}",
    )


def oauth_settings(args: argparse.Namespace, env: Mapping[str, str] = os.environ) -> OAuthSettings | None:
    """The settings the options give (None: no issuer); a ValueError says what is wrong with them."""
    from colibri.serving.oauth import ClientCredentials
    from colibri.serving.oauth.settings import SettingError, checked

    issuer = args.oauth_issuer or env.get(ISSUER_VARIABLE) or None
    if issuer is not None and args.no_auth:
        raise ValueError("--no-auth serves without tokens; drop it to accept OAuth tokens")
    if issuer is None:
        given = [name for name in _OPTIONS if getattr(args, name) is not None]
        if given:
            raise ValueError(f"--{given[0].replace('_', '-')} needs --oauth-issuer (or {ISSUER_VARIABLE})")
        return None
    introspection = None
    if args.oauth_introspection_client is not None:
        secret = env.get(SECRET_VARIABLE, "")
        if not args.oauth_introspection_client.strip() or not secret:
            raise ValueError(
                f"--oauth-introspection-client needs a client id, and its secret in {SECRET_VARIABLE}"
            )
        introspection = ClientCredentials(args.oauth_introspection_client, secret)
    names = {field: "--oauth-" + field.replace("_", "-") for field in _FIELDS}
    if not args.oauth_issuer:
        names["issuer"] = ISSUER_VARIABLE
    try:
        return checked(
            names=names,
            issuer=issuer,
            audience=args.oauth_audience,
            principal_claim=args.oauth_principal_claim,
            groups_claim=args.oauth_groups_claim,
            read_scope=args.oauth_read_scope,
            write_scope=args.oauth_write_scope,
            introspection=introspection,
        )
    except SettingError as exc:
        raise ValueError(str(exc)) from None


_FIELDS = ("issuer", "audience", "principal_claim", "groups_claim", "read_scope", "write_scope")
_OPTIONS = (*(f"oauth_{field}" for field in _FIELDS[1:]), "oauth_introspection_client")
