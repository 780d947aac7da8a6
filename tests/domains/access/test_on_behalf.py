"""The on-behalf-of statement's codec (SPEC §20): signed by the gateway's Ed25519 key with PyJWT,
taken only when a trusted key signed it as an EdDSA JWS of Colibri's type, unexpired, with a
principal; the trusted-keys file is read as `colibri key show` prints keys, a bad line named."""

from __future__ import annotations

import base64
import json
import time

import jwt
import pytest

from colibri.domains.access.on_behalf import LIFETIME_S, TYP, StatementError, StatementKey, TrustedKeys
from colibri.domains.log.note import ALG_COSIGNATURE, Signer

GATEWAY = Signer.generate("gateway")
STRANGER = Signer.generate("gateway")  # the same name, another key: another kid


def _trusting(*signers: Signer) -> TrustedKeys:
    return TrustedKeys.parse("".join(f"{s.verifier().key()}\n" for s in signers), "trusted.txt")


def _refused(statement: object, reason: str) -> StatementError:
    with pytest.raises(StatementError) as caught:
        _trusting(GATEWAY).verify(statement)
    assert caught.value.reason == reason, caught.value
    return caught.value


def _b64(part: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()


def test_a_signed_statement_says_who_the_caller_is() -> None:
    statement = StatementKey(GATEWAY).sign("ana@example.com", "https://idp.example.com", "c-1")
    checked = _trusting(STRANGER, GATEWAY).verify(statement)
    assert (checked.principal, checked.issuer, checked.jti, checked.key_name) == (
        "ana@example.com",
        "https://idp.example.com",
        "c-1",
        "gateway",
    )
    header = jwt.get_unverified_header(statement)
    assert header == {"alg": "EdDSA", "kid": f"gateway+{GATEWAY.hash:08x}", "typ": TYP}
    claims = jwt.decode(statement, options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == LIFETIME_S and "iss" not in claims


def test_a_caller_without_an_identity_provider_has_no_issuer() -> None:
    checked = _trusting(GATEWAY).verify(StatementKey(GATEWAY).sign("ana", None, "c-2"))
    assert checked.issuer is None


def test_the_key_s_repr_never_shows_its_private_part() -> None:
    key = StatementKey(GATEWAY)
    assert repr(key) == f"StatementKey(gateway+{GATEWAY.hash:08x})"
    assert base64.b64encode(GATEWAY.seed).decode() not in repr(key)


def test_a_statement_of_an_untrusted_key_is_refused() -> None:
    assert "does not trust" in str(_refused(StatementKey(STRANGER).sign("ana", None, "c"), "untrusted"))


def test_an_expired_statement_is_refused() -> None:
    _refused(StatementKey(GATEWAY).sign("ana", None, "c", now=time.time() - LIFETIME_S - 30), "expired")


def test_a_statement_whose_claims_were_changed_is_refused() -> None:
    header, _, signature = StatementKey(GATEWAY).sign("bob", None, "c").split(".")
    forged = _b64({"sub": "ana", "jti": "c", "iat": int(time.time()), "exp": int(time.time()) + 60})
    _refused(f"{header}.{forged}.{signature}", "bad_signature")


def test_an_unsigned_statement_is_refused() -> None:
    kid = f"gateway+{GATEWAY.hash:08x}"
    now = int(time.time())
    claims = {"sub": "ana", "jti": "c", "iat": now, "exp": now + 60}
    unsigned = f"{_b64({'alg': 'none', 'kid': kid, 'typ': TYP})}.{_b64(claims)}."
    _refused(unsigned, "unsigned")


def test_hs256_made_with_the_public_key_as_its_secret_is_refused() -> None:
    kid = f"gateway+{GATEWAY.hash:08x}"
    now = int(time.time())
    claims = {"sub": "ana", "jti": "c", "iat": now, "exp": now + 60}
    secret = GATEWAY.public_key() * 2  # PyJWT wants 32+ bytes of HMAC key
    hs = jwt.encode(claims, secret, algorithm="HS256", headers={"kid": kid, "typ": TYP})
    _refused(hs, "malformed")


@pytest.mark.parametrize("garbage", ["", "x", "a.b.c", "not a jws at all", "é" * 5000, 42, None])
def test_garbage_is_refused(garbage: object) -> None:
    _refused(garbage, "malformed")


def test_a_statement_valid_for_longer_than_its_lifetime_is_refused() -> None:
    kid = f"gateway+{GATEWAY.hash:08x}"
    now = int(time.time())
    claims = {"sub": "ana", "jti": "c", "iat": now, "exp": now + 3600}
    key = StatementKey(GATEWAY)._private
    long_lived = jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": kid, "typ": TYP})
    assert "longer than 60 s" in str(_refused(long_lived, "malformed"))


def test_another_kind_of_jwt_signed_by_the_key_is_refused() -> None:
    kid = f"gateway+{GATEWAY.hash:08x}"
    now = int(time.time())
    claims = {"sub": "ana", "jti": "c", "iat": now, "exp": now + 60}
    key = StatementKey(GATEWAY)._private
    _refused(jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": kid}), "malformed")


def test_the_trusted_keys_file_skips_blank_lines_and_comments() -> None:
    text = f"# the team gateway\n\n  {GATEWAY.verifier().key()}  \n"
    assert TrustedKeys.parse(text, "t").kids == (f"gateway+{GATEWAY.hash:08x}",)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (f"{GATEWAY.verifier().key()}\nnot-a-key\n", 2),
        (f"PRIVATE+KEY+{GATEWAY.key().split('+', 2)[2]}\n", 1),  # a signer key, not its verifier key
        (f"\n{Signer.generate('witness', ALG_COSIGNATURE).verifier().key()}\n", 2),
        (f"{GATEWAY.verifier().key()[:-4]}AAAA\n", 1),  # the hash no longer matches
    ],
    ids=["second-line", "signer-key", "cosigner-key", "hash-mismatch"],
)
def test_a_bad_line_of_the_trusted_keys_file_is_named(text: str, line: int) -> None:
    with pytest.raises(ValueError, match=rf"^trusted\.txt: line {line}: .*colibri key show") as caught:
        TrustedKeys.parse(text, "trusted.txt")
    assert GATEWAY.key() not in str(caught.value)


def test_a_trusted_keys_file_without_keys_is_refused() -> None:
    with pytest.raises(ValueError, match="holds no verifier key"):
        TrustedKeys.parse("# nothing yet\n", "trusted.txt")
