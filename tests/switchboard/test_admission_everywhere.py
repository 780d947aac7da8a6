"""Every method passes admission, and a token sees only what it may call (SPEC §21).

A real switchboard over HTTP with a tokens file of three tokens — `admin` (no policy), `opener`
(allowed only `open.*`) and `noevil` (denied `evil.*`) — in front of a fault server (`open`) and
the reference server-everything (`evil`: resources, templates, prompts, completions, logging),
recording into its audit store. Every request a client makes of `evil` is refused to both
restricted tokens with TOOL_NOT_ADMITTED and a `denied` row whose reason names the policy; over a
per-method limit each is RATE_LIMITED; lists, switchboard_status, /status and UNKNOWN_TOOL name
only what each token may call.
"""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.switchboard.audit_helpers import calls
from tests.switchboard.everything import everything_entry
from tests.switchboard.helpers import (
    Downstreams,
    call,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_http_face import create_token, get, http_client

pytestmark = [
    pytest.mark.anyio,
    # resources/subscribe and logging/setLevel are the handshake era's, which these clients speak.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ARCHITECTURE = "demo://resource/static/document/architecture.md"
TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
OPEN_URI = "fault://open/status"
HEALTH = {"liveness_s": 0.5, "readiness_s": 60, "check_timeout_s": 5, "restart_backoff_s": 0.2}
METHODS = (
    "resources/read",
    "prompts/get",
    "completion/complete",
    "resources/subscribe",
    "resources/unsubscribe",
    "logging/setLevel",
)
POLICIES = {"opener": {"allow": ["open.*"], "deny": ["open.touch"]}, "noevil": {"deny": ["evil.*"]}}


def _config(tmp_path: Path, tokens_file: Path, policies: dict[str, Any]) -> Path:
    downstreams = Downstreams(tmp_path)
    return write_config(
        tmp_path,
        {"open": downstreams.fault("open"), "evil": everything_entry()},
        health=HEALTH,
        auth={"tokens_file": str(tokens_file), "policies": policies},
        # A burst of 6 of each of evil's methods, refilled once a minute: enough for the restricted
        # tokens' refusals (a refused request counts too), and the admin's are soon over it.
        rate_limits={
            "per_tool": {f"evil:{method}": {"calls_per_minute": 1, "burst": 6} for method in METHODS}
        },
        audit={"db": "audit/gateway.db"},
    )


async def _refusal(request: Any) -> MCPError:
    with pytest.raises(MCPError) as refused:
        await request
    return refused.value


async def _ask_evil(client: Client) -> dict[str, MCPError]:
    """Every request of evil's a client can make, each one's error (by the row's method)."""
    prompt = types.PromptReference(name="evil.completable-prompt")
    template = types.ResourceTemplateReference(uri=TEMPLATE)
    return {
        "resources/read": await _refusal(client.read_resource(ARCHITECTURE)),
        "prompts/get": await _refusal(client.get_prompt("evil.args-prompt", {"city": "Lisbon"})),
        "completion/complete": await _refusal(client.complete(prompt, {"name": "department", "value": "E"})),
        "completion/complete (template)": await _refusal(
            client.complete(template, {"name": "resourceId", "value": "1"})
        ),
        "resources/subscribe": await _refusal(client.subscribe_resource(ARCHITECTURE)),
        "resources/unsubscribe": await _refusal(client.unsubscribe_resource(ARCHITECTURE)),
    }


async def _status(client: Client) -> dict[str, Any]:
    envelope = await call(client, "switchboard_status")
    assert envelope["ok"] is True, envelope
    data: dict[str, Any] = envelope["data"]
    return data


async def _view(client: Client, page: str) -> dict[str, Any]:
    """What one token is shown: lists, switchboard_status, UNKNOWN_TOOL and the /status page."""
    return {
        "tools": {tool.name for tool in (await client.list_tools()).tools},
        "resources": {r.uri for r in (await client.list_resources()).resources},
        "templates": {t.uri_template for t in (await client.list_resource_templates()).resource_templates},
        "prompts": {prompt.name for prompt in (await client.list_prompts()).prompts},
        "status": await _status(client),
        "unknown": await call(client, "evil.nope"),
        "unknown_open": await call(client, "open.nope"),
        "page": page,
    }


async def _until_limited(request: Callable[[], Awaitable[Any]], most: int = 10) -> MCPError:
    """Ask again until refused (the limit's burst may have been taken by refused calls before)."""
    for _ in range(most):
        try:
            await request()
        except MCPError as refused:
            return refused
    raise AssertionError(f"{most} requests and none refused")


async def _limited(client: Client) -> dict[str, MCPError]:
    """Each of evil's methods asked until over its limit: each one's refusal."""
    prompt = types.PromptReference(name="evil.completable-prompt")
    template = types.ResourceTemplateReference(uri=TEMPLATE)
    asked: dict[str, Callable[[], Awaitable[Any]]] = {
        "resources/read": lambda: client.read_resource(ARCHITECTURE),
        "prompts/get": lambda: client.get_prompt("evil.args-prompt", {"city": "Lisbon"}),
        "completion/complete": lambda: client.complete(prompt, {"name": "department", "value": "E"}),
        "completion/complete (template)": lambda: client.complete(
            template, {"name": "resourceId", "value": "1"}
        ),
        "resources/subscribe": lambda: client.subscribe_resource(ARCHITECTURE),
        "resources/unsubscribe": lambda: client.unsubscribe_resource(ARCHITECTURE),
        "logging/setLevel": lambda: client.set_logging_level("debug"),
    }
    return {method: await _until_limited(request) for method, request in asked.items()}


def _rows_say_why(store: Path) -> None:
    rows = calls(store)
    for name in ("opener", "noevil"):
        denied = [(row["tool"], row["outcome"], row["reason"]) for row in rows if row["principal"] == name]
        # Each method once, completion twice (a prompt's and a template's); setLevel goes to no
        # server of evil's for them, so it is no row at all.
        evil = [f"evil:{method}" for method in METHODS if method != "logging/setLevel"]
        evil.append("evil:completion/complete")
        assert sorted(d for d in denied if d[0].startswith("evil:")) == sorted(
            (tool, "denied", f"policy:{name}") for tool in evil
        )
        assert ("open:resources/read", "ok", None) in denied
        assert not any(tool.endswith("logging/setLevel") for tool, _, _ in denied)  # no server of its logs
    by_admin = [(row["tool"], row["outcome"], row["reason"]) for row in rows if row["principal"] == "admin"]
    for method in METHODS:
        assert (f"evil:{method}", "ok", None) in by_admin, method
        assert (f"evil:{method}", "denied", "rate_limit") in by_admin, method


async def test_every_method_is_admitted_limited_recorded_and_shown_per_token(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens.jsonl"
    token = {name: create_token(name, tokens_file).stdout.strip() for name in ("admin", "opener", "noevil")}
    config = _config(tmp_path, tokens_file, POLICIES)
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    url = f"http://127.0.0.1:{port}/mcp"
    seen: dict[str, dict[str, Any]] = {}
    refused: dict[str, dict[str, MCPError]] = {}
    try:
        wait_for_port(port, board)
        async with http_client(url, token["admin"]) as client:  # the others are not shown evil's state
            await wait_for_state(client, "evil", "HEALTHY", timeout=60)
            await wait_for_state(client, "open", "HEALTHY", timeout=60)
        for name in ("opener", "noevil", "admin"):
            async with http_client(url, token[name]) as client:
                seen[name] = await _view(client, get(f"http://127.0.0.1:{port}/status", token[name])[1])
                if name == "admin":
                    refused[name] = await _limited(client)
                else:
                    refused[name] = await _ask_evil(client)
                    # The server it may use still answers: opener's `open.*` covers open's resource.
                    seen[name]["read"] = (await client.read_resource(OPEN_URI)).contents[0].uri
                    await client.set_logging_level("debug")  # to the servers it may use: none logs
    finally:
        assert stop(board) == 0

    for name in ("opener", "noevil"):
        for method, error in refused[name].items():
            assert error.error.message.startswith("TOOL_NOT_ADMITTED: "), (name, method, error.error.message)
            assert f"auth.policies.{name}" in error.error.message
            if name == "opener" and method.startswith(("resources/", "completion/complete (")):
                # Asked by URI, the refusal does not name the server it may not see.
                assert "evil" not in error.error.message, error.error.message
        view = seen[name]
        assert not any(tool.startswith("evil.") for tool in view["tools"]) and "open.work" in view["tools"]
        assert view["resources"] == {OPEN_URI} and view["templates"] == set(), view
        assert view["prompts"] == {"open.greet"} and view["read"] == OPEN_URI
        assert [server["name"] for server in view["status"]["servers"]] == ["open"]
        assert "evil" not in str(view["status"]["resource_clashes"])
        unknown = view["unknown"]["error"]
        assert unknown["code"] == "UNKNOWN_TOOL" and "offers" not in unknown["message"], unknown
        assert 'id="server-open"' in view["page"] and "server-evil" not in view["page"]
        # A server it may call is named with only the tools it may call.
        offered = view["unknown_open"]["error"]["message"]
        assert "open offers" in offered and "work" in offered
        assert ("touch" in offered) is (name == "noevil"), offered
        assert ("open.touch" in view["tools"]) is (name == "noevil")
    admin = seen["admin"]
    assert {"evil.echo", "open.work"} <= admin["tools"] and ARCHITECTURE in admin["resources"]
    assert TEMPLATE in admin["templates"] and "evil.args-prompt" in admin["prompts"]
    assert [server["name"] for server in admin["status"]["servers"]] == ["open", "evil"]
    assert (
        "evil offers" in admin["unknown"]["error"]["message"]
        and "echo" in admin["unknown"]["error"]["message"]
    )
    assert 'id="server-open"' in admin["page"] and 'id="server-evil"' in admin["page"]
    for method, error in refused["admin"].items():
        assert error.error.message.startswith("RATE_LIMITED: "), (method, error.error.message)
        assert isinstance(error.error.data, dict) and 0 < error.error.data["retry_after_s"] <= 60

    _rows_say_why(tmp_path / "audit" / "gateway.db")
