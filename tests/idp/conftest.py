"""One identity provider per module: starting node and oidc-provider takes about a second."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.idp import IdentityProvider, identity_provider


@pytest.fixture(scope="module")
def idp() -> Iterator[IdentityProvider]:
    with identity_provider() as provider:
        yield provider
