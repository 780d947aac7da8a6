from __future__ import annotations

import pytest

from tests.helpers import call, connect, ok_data

pytestmark = pytest.mark.anyio


async def test_ping_answers_over_stdio(server_env: dict[str, str]) -> None:
    async with connect(server_env) as client:
        data = ok_data(await call(client, "server_ping"))
    assert data["mode"] == "FULL"
