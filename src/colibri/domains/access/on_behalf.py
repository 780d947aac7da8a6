"""The gateway's on-behalf-of statement (SPEC §20 "Identity through the gateway"): who the caller of
a routed call is, signed by the switchboard for a downstream Colibri that trusts its key.

A compact JWS (RFC 7515) made and checked by PyJWT, never by hand: algorithm EdDSA with the
gateway's Ed25519 key (a Colibri signer key file, `colibri key generate`), header `kid` the key's
`NAME+HASH` and `typ` TYP, claims `sub` (the principal), `jti` (the call's correlation id), `iat`,
`exp` (LIFETIME_S later) and, when an identity provider issued the caller's credential,
`sub_iss` (its issuer; not `iss`, which would name the statement's own issuer, the gateway).

The same key may sign the audit store's checkpoints (it is the default identity key): a JWS's
signing input (base64url parts joined by '.') never ends in a newline, and a signed note's text
always does, so neither signature can pass for the other.

StatementError   why a statement is not taken (its `reason`: unsigned, malformed, untrusted,
                 bad_signature, expired, replayed); never says the statement itself
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from colibri.domains.log.api import NoteError, Signer, Verifier, read_signer

ON_BEHALF_OF = "io.colibri/on-behalf-of"  # the `_meta` key of a tools/call that carries it
TYP = "colibri-obo+jwt"  # explicit typing (RFC 8725 §3.11): no other JWT passes for one
ALGORITHM = "EdDSA"
LIFETIME_S = 60
LEEWAY_S = 5  # clock skew allowed between the gateway and the downstream
MAX_STATEMENT_CHARS = 4096  # a statement is about 300 characters; a bigger one is not parsed
MAX_PRINCIPAL_CHARS = 256


class StatementError(ValueError):
    """A statement that is not taken: `reason` is one word for logs and tests; the message says why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Statement:
    """What a checked statement says: the caller, the issuer of its credential, the call, the signer."""

    principal: str
    issuer: str | None
    jti: str
    key_name: str  # the name of the trusted key that signed it (`colibri key show`'s NAME)
    kid: str
    expires_at: float


def kid_of(verifier: Verifier) -> str:
    """The key's id in a statement's header: `NAME+HASH`, as the verifier key begins."""
    return f"{verifier.name}+{verifier.hash:08x}"


class StatementKey:
    """The gateway's signing key for statements; its repr names the key, never the private part."""

    __slots__ = ("_private", "kid", "name")

    def __init__(self, signer: Signer) -> None:
        self.name = signer.name
        self.kid = kid_of(signer.verifier())
        self._private = Ed25519PrivateKey.from_private_bytes(signer.seed)

    def __repr__(self) -> str:
        return f"StatementKey({self.kid})"

    def sign(self, principal: str, issuer: str | None, jti: str, now: float | None = None) -> str:
        """The statement that `principal` (whose credential `issuer` issued, if any) makes call `jti`."""
        import jwt  # only a gateway that signs pays for PyJWT's import

        issued = int(time.time() if now is None else now)
        claims: dict[str, Any] = {"sub": principal, "jti": jti, "iat": issued, "exp": issued + LIFETIME_S}
        if issuer is not None:
            claims["sub_iss"] = issuer
        return jwt.encode(claims, self._private, algorithm=ALGORITHM, headers={"kid": self.kid, "typ": TYP})


def read_statement_key(path: Path) -> StatementKey:
    """The signer key file at `path` as a statement key; NoteError (its message names the file)."""
    return StatementKey(read_signer(path))


class TrustedKeys:
    """The gateways' verifier keys a Colibri trusts (COLIBRI_TRUSTED_GATEWAYS), by `kid`."""

    def __init__(self, verifiers: Iterable[Verifier]) -> None:
        self._by_kid: dict[str, tuple[Verifier, Ed25519PublicKey]] = {
            kid_of(v): (v, Ed25519PublicKey.from_public_bytes(v.public_key)) for v in verifiers
        }

    def __repr__(self) -> str:
        return f"TrustedKeys({', '.join(self._by_kid)})"

    @property
    def kids(self) -> tuple[str, ...]:
        return tuple(self._by_kid)

    @classmethod
    def parse(cls, text: str, source: str) -> TrustedKeys:
        """One verifier key a line, as `colibri key show` prints them; blank lines and `#` comments
        are skipped. ValueError naming `source`, the line and what a line must be."""
        verifiers = []
        for number, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            try:
                verifiers.append(Verifier.parse(stripped))
            except NoteError as exc:
                raise ValueError(
                    f"{source}: line {number}: {exc}; expected one verifier key a line, as `colibri key "
                    "show FILE` prints the gateway's key (NAME+HASH+KEY)"
                ) from None
        if not verifiers:
            raise ValueError(
                f"{source} holds no verifier key; expected one a line, as `colibri key show FILE` prints "
                "the gateway's key"
            )
        return cls(verifiers)

    @classmethod
    def read(cls, path: Path) -> TrustedKeys:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read {path} ({exc}); expected a readable UTF-8 file") from None
        return cls.parse(text, str(path))

    def verify(self, statement: object) -> Statement:
        """The statement's content once its signature, key, type and times check out; else
        StatementError. A replay is the caller's to catch (it keeps the `jti`s it has seen)."""
        import jwt  # only a Colibri that trusts a gateway pays for PyJWT's import

        if not isinstance(statement, str) or len(statement) > MAX_STATEMENT_CHARS:
            raise StatementError(
                "malformed", f"not a compact JWS of {MAX_STATEMENT_CHARS} characters or less"
            )
        try:
            header = jwt.get_unverified_header(statement)
        except jwt.PyJWTError as exc:
            raise StatementError("malformed", f"not a compact JWS ({exc})") from None
        if header.get("alg") != ALGORITHM:
            reason = "unsigned" if str(header.get("alg")).lower() == "none" else "malformed"
            raise StatementError(reason, f"signed with alg {header.get('alg')!r}, not {ALGORITHM}")
        kid = header.get("kid")
        known = self._by_kid.get(kid) if isinstance(kid, str) else None
        if known is None or not isinstance(kid, str):
            raise StatementError("untrusted", f"signed by a key this Colibri does not trust ({kid!r})")
        if header.get("typ") != TYP:
            raise StatementError("malformed", f"its typ is {header.get('typ')!r}, not {TYP!r}")
        verifier, public = known
        claims = _claims(jwt, statement, public)
        return Statement(
            claims["sub"], claims.get("sub_iss"), claims["jti"], verifier.name, kid, float(claims["exp"])
        )


def _claims(jwt: Any, statement: str, public: Ed25519PublicKey) -> Mapping[str, Any]:
    options = {"require": ["sub", "jti", "iat", "exp"]}
    try:
        claims: dict[str, Any] = jwt.decode(
            statement, public, algorithms=[ALGORITHM], options=options, leeway=LEEWAY_S
        )
    except jwt.ExpiredSignatureError:
        raise StatementError("expired", "it has expired") from None
    except jwt.InvalidSignatureError:
        raise StatementError("bad_signature", "its signature does not verify") from None
    except jwt.ImmatureSignatureError:
        raise StatementError("malformed", "it was issued in the future (check the gateway's clock)") from None
    except jwt.PyJWTError as exc:
        raise StatementError("malformed", f"its claims are not usable ({exc})") from None
    exp, iat = claims["exp"], claims["iat"]
    if not isinstance(iat, int | float) or exp - iat > LIFETIME_S:
        raise StatementError("malformed", f"it is valid for longer than {LIFETIME_S} s")
    sub, issuer, jti = claims["sub"], claims.get("sub_iss"), claims["jti"]
    if not isinstance(sub, str) or not 0 < len(sub) <= MAX_PRINCIPAL_CHARS or not sub.isprintable():
        raise StatementError("malformed", f"its sub is not a principal of 1-{MAX_PRINCIPAL_CHARS} characters")
    if not (issuer is None or (isinstance(issuer, str) and issuer.isprintable() and len(issuer) <= 1024)):
        raise StatementError("malformed", "its sub_iss is not an issuer URL")
    if not isinstance(jti, str) or not 0 < len(jti) <= 128:
        raise StatementError("malformed", "its jti is not a call's correlation id")
    return claims
