"""Bearer tokens: random, prefixed, stored as SHA-256, matched in constant time."""

from __future__ import annotations

import hashlib

from colibri.core import tokens


def test_tokens_are_prefixed_random_and_stored_as_their_sha256() -> None:
    made = {tokens.new_token() for _ in range(100)}
    assert len(made) == 100
    token = made.pop()
    assert token.startswith("col_") and len(token) >= 4 + 43
    assert tokens.digest(token) == hashlib.sha256(token.encode()).hexdigest()


def test_find_names_the_matching_digest_only() -> None:
    first, second = tokens.new_token(), tokens.new_token()
    stored = [tokens.digest(first), tokens.digest(second)]
    assert tokens.find(first, stored) == 0
    assert tokens.find(second, stored) == 1
    assert tokens.find(tokens.new_token(), stored) is None
    assert tokens.find(first, []) is None
