"""`"isolate": "principal"`: one downstream process per principal (SPEC §21).

Two tokens call the same isolated hostile server (hostile_server.py) through the switchboard's HTTP
face: their calls run in two processes, each started with its own `${PRINCIPAL}` in `env` and its
own envFile, each principal's log lines and elicitations reach its own session and no other (even
on a stdio server whose messages name no request), and a process stops after `idle_s` without calls.
The keys are checked at load with their JSON path.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from colibri.switchboard.base import ConfigError
from colibri.switchboard.config import parse
from tests.switchboard.helpers import process_gone, switchboard, wait_for_state, write_config
from tests.switchboard.test_own_calls import HOSTILE, Ear, gateway, session

pytestmark = pytest.mark.anyio


def isolated(tmp_path: Path, **entry: Any) -> dict[str, Any]:
    secrets = tmp_path / "secrets"
    secrets.mkdir(exist_ok=True)
    for name in ("admin", "reader"):
        (secrets / f"{name}.env").write_text(f"HOSTILE_KEY=key-of-{name}\n")
    return {
        "command": sys.executable,
        "args": [str(HOSTILE)],
        "env": {"HOSTILE_WHO": "${PRINCIPAL}", "HOSTILE_RECORD": "/dev/null"},
        "envFile": "secrets/${PRINCIPAL}.env",
        "isolate": "principal",
        **entry,
    }


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_each_principal_has_its_own_process_which_hears_only_its_calls(
    tmp_path: Path, era: str
) -> None:
    servers = {"iso": isolated(tmp_path, idle_s=2)}
    async with gateway(tmp_path, servers) as (base, tokens):
        ears = {name: Ear(f"s{n}") for n, name in enumerate(("admin", "reader"))}
        async with (
            session(f"{base}/mcp", tokens["admin"], ears["admin"], era) as admin,
            session(f"{base}/mcp", tokens["reader"], ears["reader"], era) as reader,
        ):
            await wait_for_state(admin, "iso", "HEALTHY", timeout=30)
            who = {
                name: (await client.call_tool("iso.who", {})).structured_content
                for name, client in (("admin", admin), ("reader", reader))
            }
            assert all(told is not None and "pid" in told for told in who.values()), who
            answers: dict[str, list[dict[str, Any]]] = {"admin": [], "reader": []}

            async def calls(name: str, client: Any) -> None:
                for k in range(10):
                    secret = f"{ears[name].name}-{k}"
                    result = await client.call_tool(
                        "iso.work", {"secret": secret, "ask": True, "hold_s": 0.05}
                    )
                    assert result.structured_content is not None
                    answers[name].append(result.structured_content)

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(calls, "admin", admin)
                tasks.start_soon(calls, "reader", reader)
            # Without calls for `idle_s`, each principal's process stops.
            pids = {name: {entry["pid"] for entry in told} for name, told in answers.items()}
            with anyio.fail_after(30):
                while not all(process_gone(pid) for pid in pids["admin"] | pids["reader"]):
                    await anyio.sleep(0.05)
            again = (await admin.call_tool("iso.who", {})).structured_content
    # Each principal's calls ran in a process of its own (one each: no call waited `idle_s`).
    assert len(pids["admin"]) == 1 and len(pids["reader"]) == 1 and pids["admin"] != pids["reader"], pids
    assert {name: (told["who"], told["key"]) for name, told in who.items() if told} == {
        "admin": ("admin", "key-of-admin"),
        "reader": ("reader", "key-of-reader"),
    }
    for name, ear in ears.items():
        assert ear.foreign() == [], (name, ear.foreign())
        told = answers[name]
        # One call in flight per process: each of its messages is tied to that call, and heard.
        assert all(
            entry["elicited"] == {"action": "accept", "content": {"who": ear.name}} for entry in told
        ), told
        # Log lines reach a handshake-era session (a 2026-era one hears those it opts into per request).
        assert era != "legacy" or all(f"log: log {entry['secret']}" in ear.heard for entry in told), ear.heard
    assert again is not None and again["who"] == "admin" and again["pid"] not in pids["admin"]


@pytest.mark.parametrize(
    ("entry", "path", "message"),
    [
        ({"url": "http://127.0.0.1:9/mcp", "isolate": "principal"}, "mcpServers.s.isolate", "stdio servers"),
        ({"command": "x", "isolate": "everyone"}, "mcpServers.s.isolate", "one of 'principal'"),
        ({"command": "x", "idle_s": 5}, "mcpServers.s.idle_s", '"isolate": "principal"'),
        ({"command": "x", "isolate": "principal", "idle_s": 0}, "mcpServers.s.idle_s", "> 0"),
        ({"command": "x", "envFile": "${PRINCIPAL}.env"}, "mcpServers.s.envFile", '"isolate": "principal"'),
    ],
)
def test_the_isolation_keys_are_checked_at_load(entry: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse(json.dumps({"mcpServers": {"s": entry}}), {})
    assert refused.value.path == path and message in refused.value.message, refused.value


def test_an_isolated_entry_keeps_its_principal_for_each_process(tmp_path: Path) -> None:
    entry = isolated(tmp_path)
    spec = parse(json.dumps({"mcpServers": {"s": entry}}), {}, folder=tmp_path).server("s")
    assert spec.isolate and spec.idle_s == 300
    assert spec.env["HOSTILE_WHO"] == "${PRINCIPAL}"
    assert spec.env_file == str(tmp_path / "secrets/${PRINCIPAL}.env")


async def test_over_stdio_the_local_principal_gets_its_own_process(tmp_path: Path) -> None:
    entry = isolated(tmp_path)
    (tmp_path / "secrets" / "local.env").write_text("HOSTILE_KEY=key-of-local\n")
    config = write_config(
        tmp_path, {"iso": entry}, health={"liveness_s": 1, "readiness_s": 2, "check_timeout_s": 10}
    )
    ear = Ear("s0")
    async with switchboard(config, **ear.callbacks()) as client:
        await wait_for_state(client, "iso", "HEALTHY", timeout=30)
        who = (await client.call_tool("iso.who", {})).structured_content
        work = (await client.call_tool("iso.work", {"secret": "s0-1", "ask": True})).structured_content
    assert who is not None and (who["who"], who["key"]) == ("local", "key-of-local"), who
    assert work is not None and work["pid"] == who["pid"]
    assert work["elicited"] == {"action": "accept", "content": {"who": "s0"}}, work
    assert "log: log s0-1" in ear.heard and ear.foreign() == []
