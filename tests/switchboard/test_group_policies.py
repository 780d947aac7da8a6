"""IdP groups in the switchboard's policies and rate limits (SPEC §20, "The principal is the
person"): `group:NAME` keys of `auth.policies` and `rate_limits.per_principal` govern the callers
whose Identity carries that group, unless the principal has an entry of its own.

Policies and the limiter are judged in the process (the clock injected); then a board over
in-memory downstreams (test_observers' sessions) shows that lists, switchboard_status,
UNKNOWN_TOOL's suggestions, calls, resources and updates all judge the caller by its groups.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from colibri.core.identity import Identity
from colibri.switchboard.base import Hooks, refusal_reason
from colibri.switchboard.config import ServerSpec, SwitchboardConfig, parse
from colibri.switchboard.program.reload import reload_from
from colibri.switchboard.routing import (
    RATE_LIMITED,
    TOOL_NOT_ADMITTED,
    Limiter,
    Policies,
    RoutedCall,
    Switchboard,
)
from tests.switchboard.test_limits import Clock
from tests.switchboard.test_observers import DOCUMENT, Session

pytestmark = pytest.mark.anyio

ANA = Identity("ana", groups=("sre",))
BOB = Identity("bob", groups=("dev",))
POLICIES = {
    "group:sre": {"allow": ["*"]},
    "group:dev": {"allow": ["b.*"]},
    "group:ops": {"allow": ["a.search"]},
    "carol": {"deny": ["a.*"]},
}


def config(**sections: Any) -> SwitchboardConfig:
    servers = {"a": {"command": "a"}, "b": {"command": "b"}}
    health = {"liveness_s": 60, "readiness_s": 60}
    return parse(json.dumps({"mcpServers": servers, "health": health, **sections}))


def policies() -> Policies:
    return Policies(config(auth={"tokens_file": "t", "policies": POLICIES}))


def test_a_group_policy_admits_its_members_and_a_narrower_one_refuses_others() -> None:
    judge = policies()
    assert judge.admit(RoutedCall("a.search", {}, "ana", identity=ANA)) is None
    refused = judge.admit(RoutedCall("a.search", {}, "bob", identity=BOB))
    assert refused is not None and refused.code == TOOL_NOT_ADMITTED
    assert refused.details == {"policy": "auth.policies.group:dev", "principal": "bob"}
    assert refused.message == (
        "a.search is not admitted for 'bob' (as a member of dev) by auth.policies.group:dev (allow ['b.*']); "
        "tools/list shows what this token may call"
    )
    assert refusal_reason(TOOL_NOT_ADMITTED, refused.details) == "policy:group:dev"
    assert judge.admit(RoutedCall("b.search", {}, "bob", identity=BOB)) is None


def test_the_principals_own_policy_wins_over_its_groups() -> None:
    judge = policies()
    carol = Identity("carol", groups=("sre",))  # sre admits everything; carol's own policy does not
    refused = judge.admit(RoutedCall("a.search", {}, "carol", identity=carol))
    assert refused is not None and refused.details["policy"] == "auth.policies.carol"
    assert "for the token 'carol'" in refused.message
    assert judge.admit(RoutedCall("b.search", {}, "carol", identity=carol)) is None


def test_the_policies_of_several_groups_admit_what_any_of_them_admits() -> None:
    judge = policies()
    dave = Identity("dave", groups=("dev", "ops", "no-policy"))
    assert judge.admit(RoutedCall("a.search", {}, "dave", identity=dave)) is None  # ops
    assert judge.admit(RoutedCall("b.search", {}, "dave", identity=dave)) is None  # dev
    refused = judge.admit(RoutedCall("a:resources/read", {}, "dave", "resources/read", "a", identity=dave))
    assert refused is not None
    assert refused.details == {
        "policy": "auth.policies.group:dev",
        "principal": "dave",
        "policies": "auth.policies.group:dev, auth.policies.group:ops",
    }
    assert "'dave' (as a member of dev, ops)" in refused.message


def test_a_caller_no_policy_names_may_call_everything() -> None:
    judge = policies()
    for who in (Identity("erin", groups=("no-policy",)), Identity("erin"), "bob"):
        assert judge.of(who) is None
        assert judge.hides(who, "a.search") is None
    # A bare name carries no groups: `bob` by name alone is governed by nothing.
    assert judge.admit(RoutedCall("a.search", {}, "bob")) is None


def test_what_a_caller_is_shown_follows_its_groups() -> None:
    judge = policies()
    assert judge.hides(ANA, "a.search") is None
    assert judge.hides(BOB, "a.search") == (
        "not admitted for 'bob' (as a member of dev) by auth.policies.group:dev (allow ['b.*'])"
    )
    assert judge.shows_server(BOB, "b", ["search"]) and not judge.shows_server(BOB, "a", ["search"])
    assert judge.shows_server(ANA, "a", ["search"])


# --- rate limits -----------------------------------------------------------------------------------


def limiter(**limits: Any) -> tuple[Limiter, Clock]:
    clock = Clock()
    return Limiter(config(rate_limits=limits), clock), clock


def calls(limits: Limiter, who: Identity, n: int) -> list[str | None]:
    """The refusal codes of `n` calls by `who` (None: admitted)."""
    refusals = [limits.admit(RoutedCall("a.search", {}, who.principal, identity=who)) for _ in range(n)]
    return [None if refusal is None else refusal.code for refusal in refusals]


def test_a_groups_limit_gives_each_member_a_bucket_of_its_own() -> None:
    limits, _ = limiter(
        per_token={"calls_per_minute": 60, "burst": 5},
        per_principal={"group:sre": {"calls_per_minute": 2}},
    )
    erin = Identity("erin", groups=("sre",))
    assert calls(limits, ANA, 3) == [None, None, RATE_LIMITED]
    assert calls(limits, erin, 2) == [None, None]  # ana's calls took nothing from erin's bucket
    assert calls(limits, BOB, 6) == [None] * 5 + [RATE_LIMITED]  # not a member: per_token
    refused = limits.admit(RoutedCall("a.search", {}, "ana", identity=ANA))
    assert refused is not None
    assert refused.details == {
        "retry_after_s": 30.0,
        "limit": 'rate_limits.per_principal["group:sre"]',
        "principal": "ana",
    }


def test_the_principals_own_limit_wins_and_of_several_groups_the_most_generous() -> None:
    limits, _ = limiter(
        per_principal={
            "ana": {"calls_per_minute": 1},
            "group:sre": {"calls_per_minute": 10, "burst": 2},
            "group:dev": {"calls_per_minute": 10, "burst": 4},
            "group:ops": {"calls_per_minute": 3},
        },
    )
    assert calls(limits, ANA, 2) == [None, RATE_LIMITED]  # her own 1 a minute, not sre's
    frank = Identity("frank", groups=("ops", "sre", "dev"))
    assert calls(limits, frank, 5) == [None] * 4 + [RATE_LIMITED]  # dev's: 10 a minute, bursts of 4
    refused = limits.admit(RoutedCall("a.search", {}, "frank", identity=frank))
    assert refused is not None and refused.details["limit"] == 'rate_limits.per_principal["group:dev"]'
    # Without per_token, a caller no entry names is not limited.
    assert calls(limits, Identity("gus"), 20) == [None] * 20


def test_a_bucket_keeps_what_it_holds_when_its_callers_limit_changes() -> None:
    limits, clock = limiter(
        per_principal={
            "group:sre": {"calls_per_minute": 60, "burst": 3},
            "group:dev": {"calls_per_minute": 6},
        },
    )
    assert calls(limits, ANA, 2) == [None, None]  # one left of sre's 3
    as_dev = Identity("ana", groups=("dev",))  # her next token carries other groups
    assert calls(limits, as_dev, 2) == [None, RATE_LIMITED]  # no fresh bucket of 6
    clock.now += 10.0
    assert calls(limits, as_dev, 2) == [None, RATE_LIMITED]  # refilled at dev's 6 a minute


# --- a board: lists, status, suggestions, calls and resources --------------------------------------


@asynccontextmanager
async def running(board_config: SwitchboardConfig) -> AsyncIterator[Switchboard]:
    sessions = {"a": Session("a"), "b": Session("b")}

    @asynccontextmanager
    async def connector(spec: ServerSpec, hooks: Hooks, timeout: float) -> AsyncIterator[Session]:
        yield sessions[spec.name]

    observers = (Limiter(board_config), Policies(board_config))
    board = Switchboard(board_config, connector=connector, observers=observers)
    async with anyio.create_task_group() as tasks:
        await tasks.start(board.run)
        with anyio.fail_after(5):
            await board.settled(5)
        yield board
        tasks.cancel_scope.cancel()


async def test_a_board_shows_and_routes_each_caller_by_its_groups() -> None:
    async with running(config(auth={"tokens_file": "t", "policies": POLICIES})) as board:
        assert [tool.name for tool in board.tools(ANA)] == ["a.search", "b.search", "switchboard_status"]
        assert [tool.name for tool in board.tools(BOB)] == ["b.search", "switchboard_status"]
        assert [server["name"] for server in board.router.status_for(BOB)["servers"]] == ["b"]
        assert len(board.router.status_for(ANA)["servers"]) == 2

        assert not (await board.call("a.search", {}, principal=ANA)).is_error
        refused = await board.call("a.search", {}, principal=BOB)
        assert refused.is_error and (refused.structured_content or {})["error"]["code"] == TOOL_NOT_ADMITTED
        # A server bob may not call is answered as one that does not exist.
        unknown = (await board.call("a.nope", {}, principal=BOB)).structured_content or {}
        assert "a offers" not in unknown["error"]["message"]
        unknown = (await board.call("b.nope", {}, principal=BOB)).structured_content or {}
        assert "b offers search" in unknown["error"]["message"]

        assert [r.uri for r in board.passthrough.resources(ANA)] == [DOCUMENT.uri]
        assert board.passthrough.resources(BOB) == []
        assert board.passthrough.readable(ANA, "a") and not board.passthrough.readable(BOB, "a")
        assert (await board.passthrough.read(DOCUMENT.uri, ANA)).contents[0].text == "hi"  # type: ignore[union-attr]
        with pytest.raises(MCPError) as caught:
            await board.passthrough.read(DOCUMENT.uri, BOB)
        assert caught.value.error.message.startswith(f"{TOOL_NOT_ADMITTED}: resources/read of ")
        assert "auth.policies.group:dev" in caught.value.error.message


async def test_a_reload_naming_a_malformed_group_is_refused_and_the_groups_policies_stay(
    tmp_path: Path,
) -> None:
    async with running(config(auth={"tokens_file": "t", "policies": POLICIES})) as board:
        path = tmp_path / "switchboard.json"
        servers = {"a": {"command": "a"}, "b": {"command": "b"}}
        bad = {"group:": {"allow": ["*"]}}
        path.write_text(json.dumps({"mcpServers": servers, "auth": {"tokens_file": "t", "policies": bad}}))
        assert await reload_from(board, str(path)) is False
        assert [tool.name for tool in board.tools(BOB)] == ["b.search", "switchboard_status"]
