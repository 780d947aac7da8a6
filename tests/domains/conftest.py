"""The domain suites' end-to-end tests serve from each backend in turn: `server_env` is `backend_env`."""

from __future__ import annotations

import pytest


@pytest.fixture
def server_env(backend_env: dict[str, str]) -> dict[str, str]:
    return backend_env
