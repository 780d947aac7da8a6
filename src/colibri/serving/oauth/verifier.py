"""Proving an identity provider's access token (SPEC §20), with PyJWT; never by hand.

A JWT is accepted only when every check holds: its `alg` is RS256, ES256 or EdDSA (never `none`,
never a symmetric algorithm, whose "secret" could be the provider's public key) and is the
algorithm of the key its `kid` names; the signature verifies with that key from the provider's
JWKS; `iss` is the issuer; `aud` contains the audience (RFC 8707); `exp` and `nbf` hold within 60 s
of leeway. A token that is not a JWT is asked of the provider by RFC 7662 introspection when a
client for it is configured, else refused. A token proved is kept (by its SHA-256) for up to a
minute and never past its `exp`, so a client's every request does not pay for the signature again;
a key the provider withdraws stops working within that minute. A refusal answers only
`invalid_token`; the reason goes to the log (at most one line a minute per reason, never the token).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx2
import jwt

from colibri.core.principals import reserved
from colibri.serving.bearer import RefusalLog
from colibri.serving.oauth.access import OAuthAccess
from colibri.serving.oauth.issuer import TIMEOUT_S, Issuer, IssuerUnavailable
from colibri.serving.oauth.settings import ClientCredentials, OAuthSettings

log = logging.getLogger("colibri.oauth")

ALGORITHMS = ("RS256", "ES256", "EdDSA")
KNOWN_REFUSED = frozenset({"none", "HS256", "HS384", "HS512", "RS384", "RS512", "PS256", "ES384", "ES512"})
LEEWAY_S = 60
NAME_LIMIT = 256  # a principal's or a group's name, as the switchboard caps the names it is given
GROUPS_LIMIT = 256
KEPT_S = 60.0  # a proved token is reused this long at most (and never past its exp)
KEPT_LIMIT = 10_000  # a bound, not a policy: a flood of tokens must not grow the memory


class Refused(Exception):
    """Why a token is refused: `reason` a short key (for the log's rate limit), the message for people."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


class OAuthVerifier:
    """The SDK `TokenVerifier` for one provider's access tokens."""

    def __init__(
        self,
        settings: OAuthSettings,
        issuer: Issuer | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if settings.audience is None:
            raise ValueError("OAuthVerifier needs the audience (OAuthSettings.for_audience)")
        self.settings = settings
        self.issuer = issuer or Issuer(settings.issuer)
        self._clock = clock
        self._refusals = RefusalLog(log)
        self._kept: dict[bytes, tuple[float, OAuthAccess]] = {}

    async def verify_token(self, token: str) -> OAuthAccess | None:
        try:
            return await self.prove(token)
        except Refused as refusal:
            self._refusals.refused(refusal.reason, f"an OAuth token of {self.settings.issuer}: {refusal}")
            return None

    async def prove(self, token: str) -> OAuthAccess:
        """The access `token` grants, or `Refused` saying why."""
        digest = hashlib.sha256(token.encode()).digest()
        now = self._clock()
        kept = self._kept.get(digest)
        if kept is not None and kept[0] > now:
            return kept[1]
        access = await self._prove(token)
        if len(self._kept) >= KEPT_LIMIT:
            self._kept.clear()
        self._kept[digest] = (min(now + KEPT_S, access.expires_at or now), access)
        return access

    async def _prove(self, token: str) -> OAuthAccess:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.DecodeError:
            if self.settings.introspection is None:
                raise Refused("malformed", "not a JWT, and no introspection client is configured") from None
            return await self._introspect(token, self.settings.introspection)
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            # One log line a minute per algorithm people know of: `none` and HS256 are attacks
            # worth seeing apart; any other name shares one key, so made-up names cannot grow it.
            # `alg` is whatever the token's header holds: a list is not hashable, a string may be long.
            known = alg if isinstance(alg, str) and alg in KNOWN_REFUSED else "other"
            raise Refused(
                f"algorithm {known}",
                f"the algorithm {repr(alg)[:64]} is refused (allowed: {', '.join(ALGORITHMS)})",
            )
        kid = header.get("kid")
        key = await self.issuer.key(kid if isinstance(kid, str) else None)
        if key is None:
            why = "its keys have not been fetched yet" if not self.issuer.ready else f"no key {kid!r}"
            raise Refused("unknown_key", f"signed by a key the provider does not publish ({why})")
        if key.algorithm_name != alg:
            raise Refused("algorithm", f"the key {kid!r} is for {key.algorithm_name}, the token says {alg}")
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=self.settings.audience,
                issuer=self.settings.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise Refused("expired", "expired (exp is past, beyond 60 s of leeway)") from None
        except jwt.ImmatureSignatureError:
            raise Refused("not_yet_valid", "not valid yet (nbf or iat is ahead)") from None
        except jwt.InvalidAudienceError:
            raise Refused("audience", f"its aud does not contain {self.settings.audience}") from None
        except jwt.InvalidIssuerError:
            raise Refused("issuer", f"its iss is not {self.settings.issuer}") from None
        except jwt.InvalidSignatureError:
            raise Refused("signature", "the signature does not verify") from None
        except jwt.PyJWTError as exc:
            raise Refused("claims", str(exc)) from None
        return self._access(token, claims)

    def _access(self, token: str, claims: Mapping[str, Any]) -> OAuthAccess:
        settings = self.settings
        principal = claims.get(settings.principal_claim)
        if not isinstance(principal, str) or not principal:
            raise Refused("principal", f"it has no {settings.principal_claim!r} claim to name its principal")
        if len(principal) > NAME_LIMIT or not principal.isprintable():
            raise Refused(
                "principal_name",
                f"its {settings.principal_claim!r} is not a printable name of at most {NAME_LIMIT} chars",
            )
        if (taken := reserved(principal)) is not None:
            raise Refused("principal_reserved", taken)
        jti = claims.get("jti")
        exp = claims.get("exp")
        return OAuthAccess(
            token=token,
            client_id=principal,
            scopes=self._scopes(claims),
            expires_at=int(exp) if isinstance(exp, (int, float)) else None,
            resource=settings.audience,
            subject=claims.get("sub") if isinstance(claims.get("sub"), str) else None,
            issuer=settings.issuer,
            token_id=jti if isinstance(jti, str) and jti else hashlib.sha256(token.encode()).hexdigest(),
            groups=_groups(claims.get(settings.groups_claim)),
        )

    def _scopes(self, claims: Mapping[str, Any]) -> list[str]:
        """The provider's scopes as Colibri's: the write scope gives read and write, the read scope read."""
        raw = claims.get("scope", claims.get("scp", ""))
        granted = set(raw.split() if isinstance(raw, str) else raw if isinstance(raw, list) else ())
        if self.settings.write_scope in granted:
            return ["read", "write"]
        return ["read"] if self.settings.read_scope in granted else []

    async def _introspect(self, token: str, client: ClientCredentials) -> OAuthAccess:
        now = self._clock()
        claims = await self._ask(token, client)
        if claims.get("active") is not True:
            raise Refused("inactive", "introspection says it is not active")
        if claims.get("iss", self.settings.issuer) != self.settings.issuer:
            raise Refused("issuer", f"introspection names the issuer {claims.get('iss')!r}")
        audience = claims.get("aud")
        audiences = (
            [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
        )
        if self.settings.audience not in audiences:
            raise Refused("audience", f"introspection names no audience {self.settings.audience}")
        exp = claims.get("exp")
        if isinstance(exp, (int, float)) and exp + LEEWAY_S < now:
            raise Refused("expired", "introspection says it expired")
        if "sub" not in claims and isinstance(claims.get("client_id"), str):
            # A machine's token (client credentials) has no resource owner: RFC 7662 names its
            # client instead, which a JWT of the same grant carries as `sub` (RFC 9068 §2.2).
            claims = {**claims, "sub": claims["client_id"]}
        return self._access(token, {"jti": None, **claims})

    async def _ask(self, token: str, client: ClientCredentials) -> dict[str, Any]:
        try:
            endpoint = (await self.issuer.metadata()).introspection_endpoint
        except IssuerUnavailable as exc:
            raise Refused("no_keys", f"the provider cannot be reached ({exc})") from None
        if endpoint is None:
            raise Refused("introspection", "the provider publishes no introspection_endpoint")
        try:
            async with httpx2.AsyncClient(timeout=TIMEOUT_S) as http:
                response = await http.post(
                    endpoint,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=(client.client_id, client.client_secret),
                )
            response.raise_for_status()
            answer = response.json()
        except (httpx2.HTTPError, ValueError) as exc:
            raise Refused("introspection", f"introspection at {endpoint} failed: {exc}") from None
        if not isinstance(answer, dict):
            raise Refused("introspection", "introspection answered no JSON object")
        return answer


def _groups(value: object) -> tuple[str, ...]:
    """The groups claim as names: a list of strings, or one space-separated string. A name a policy
    could not hold (too long, unprintable) is left out, and so is any past the first GROUPS_LIMIT."""
    names = value.split() if isinstance(value, str) else value if isinstance(value, list) else []
    kept = (
        item for item in names if isinstance(item, str) and 0 < len(item) <= NAME_LIMIT and item.isprintable()
    )
    return tuple(kept)[:GROUPS_LIMIT]
