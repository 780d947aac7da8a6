"""A downstream's roots request during a call is bridged through the switchboard (SPEC §17): it
reaches the client of the call — as a request on its session for a handshake-era client, as an
input request for a 2026-era one — and the client's roots come back to the downstream, from a
downstream of either era. A client that declared no roots capability is not asked.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

from tests.switchboard.helpers import switchboard, wait_for_state, write_config

pytestmark = pytest.mark.anyio

HEALTH = {"liveness_s": 0.2, "readiness_s": 0.5, "check_timeout_s": 2}
ROOTS_SERVER = Path(__file__).with_name("roots_server.py")
CLIENT_ROOTS = [
    {"uri": "file:///work/project", "name": "project"},
    {"uri": "file:///srv/data", "name": "data"},
]


def _servers() -> dict[str, Any]:
    """The roots server twice: of the handshake era (`old`), and of the 2026 era alone (`modern`)."""
    entry = {"command": sys.executable, "args": [str(ROOTS_SERVER)]}
    return {"old": entry, "modern": {**entry, "env": {"ROOTS_ERA": "modern"}}}


class Roots:
    """A client's roots callback, and how often it was asked."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.asked += 1
        return types.ListRootsResult(roots=[types.Root(uri=r["uri"], name=r["name"]) for r in CLIENT_ROOTS])


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_the_clients_roots_reach_a_downstream_of_either_era(tmp_path: Path, era: str) -> None:
    config = write_config(tmp_path, _servers(), health=HEALTH)
    roots = Roots()
    async with switchboard(config, mode=era, list_roots_callback=roots) as client:
        assert client.protocol_version == ("2026-07-28" if era == "auto" else "2025-11-25")
        await wait_for_state(client, "old", "HEALTHY")
        await wait_for_state(client, "modern", "HEALTHY")
        from_old = await client.call_tool("old.roots", {})
        from_modern = await client.call_tool("modern.roots", {})
    assert from_old.structured_content == {"roots": CLIENT_ROOTS, "era": "handshake"}
    assert from_modern.structured_content == {"roots": CLIENT_ROOTS, "era": "2026"}
    assert roots.asked == 2


async def test_a_2026_era_client_is_asked_for_its_roots_as_an_input_request(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"old": _servers()["old"]}, health=HEALTH)
    async with switchboard(config, mode="auto", list_roots_callback=Roots()) as client:
        await wait_for_state(client, "old", "HEALTHY")
        # Driven by hand: the downstream's roots/list is the first round's open input request.
        first = await client.session.call_tool("old.roots", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        assert first.input_requests is not None and first.request_state is not None
        [(key, asked)] = first.input_requests.items()
        assert isinstance(asked, types.ListRootsRequest), asked
        given = types.ListRootsResult(roots=[types.Root(uri="file:///by/hand", name="by hand")])
        final = await client.session.call_tool(
            "old.roots", {}, input_responses={key: given}, request_state=first.request_state
        )
    assert isinstance(final, types.CallToolResult)
    assert final.structured_content == {
        "roots": [{"uri": "file:///by/hand", "name": "by hand"}],
        "era": "handshake",
    }


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_a_client_without_the_roots_capability_is_not_asked(tmp_path: Path, era: str) -> None:
    config = write_config(tmp_path, {"old": _servers()["old"]}, health=HEALTH)
    async with switchboard(config, mode=era) as client:  # no roots callback: the capability is not declared
        await wait_for_state(client, "old", "HEALTHY")
        with pytest.raises(MCPError) as refused:
            await client.call_tool("old.roots", {})
    # Refused to the downstream by the switchboard itself, in both eras: the spec forbids sending a
    # client a request of a capability it did not declare. The roots server lets that error be its
    # own answer, passed through as itself.
    expected = "the client did not declare the roots capability, so it cannot be asked roots/list"
    assert refused.value.error.message == expected, refused.value.error
