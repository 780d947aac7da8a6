"""The whole protocol through the switchboard, with the reference server-everything behind it.

A real switchboard subprocess, a real server-everything (node, pinned) and the Python SDK client:
resources, templates, reads, subscriptions and their updates, prompts, completion, progress, log
messages and a sampling request relayed from the downstream to the client and back.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError

from tests.switchboard.everything import everything_entry
from tests.switchboard.helpers import (
    Downstreams,
    Inbox,
    free_port,
    stop,
    switchboard,
    wait_for_port,
    wait_for_state,
    write_config,
)

pytestmark = [
    pytest.mark.anyio,
    # logging/setLevel and resources/subscribe are deprecated by the 2026 era; the handshake era,
    # which these sessions speak, still has them.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ARCHITECTURE = "demo://resource/static/document/architecture.md"


async def test_resources_prompts_completion_progress_logs_and_sampling_pass_through(tmp_path: Path) -> None:
    # 2 s of work with progress every 0.5 s under a 1 s timeout: each progress pushes the deadline out.
    entry = {**everything_entry(), "tool_timeouts": {"trigger-long-running-operation": 1}}
    config = write_config(tmp_path, {"everything": entry}, health={"readiness_s": 60})
    inbox = Inbox()
    sampled: list[types.CreateMessageRequestParams] = []

    async def sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="sampled by the test client"), model="test-model"
        )

    elicited: list[types.ElicitRequestParams] = []

    async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        elicited.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})

    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    async with switchboard(
        config,
        message_handler=inbox.message,
        logging_callback=inbox.log,
        sampling_callback=sample,
        elicitation_callback=elicit,
    ) as client:
        await wait_for_state(client, "everything", "HEALTHY", timeout=30)
        capabilities = client.server_capabilities
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        read = await client.read_resource(ARCHITECTURE)
        dynamic = await client.read_resource("demo://resource/dynamic/text/7")
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("everything.args-prompt", {"city": "Lisbon", "state": "PT"})
        completion = await client.complete(
            types.PromptReference(name="everything.completable-prompt"),
            {"name": "department", "value": "Eng"},
        )
        long_run = await client.call_tool(
            "everything.trigger-long-running-operation",
            {"duration": 2, "steps": 4},
            progress_callback=on_progress,
        )
        await client.set_logging_level("debug")
        await client.subscribe_resource(ARCHITECTURE)
        await client.call_tool("everything.toggle-subscriber-updates", {})
        await inbox.wait_for(
            lambda: any(
                isinstance(n, types.ResourceUpdatedNotification) and n.params.uri == ARCHITECTURE
                for n in inbox.notifications
            )
        )
        # The log lines the server then writes on its own belong to no call: they are dropped
        # (SPEC §21, tests/switchboard/test_own_calls.py), no longer passed to every client.
        sampling = await client.call_tool(
            "everything.trigger-sampling-request", {"prompt": "hello", "maxTokens": 5}
        )
        elicitation = await client.call_tool("everything.trigger-elicitation-request", {})
        await client.unsubscribe_resource(ARCHITECTURE)

    assert capabilities.resources is not None and capabilities.resources.subscribe
    assert capabilities.prompts is not None and capabilities.completions is not None
    assert ARCHITECTURE in [resource.uri for resource in resources.resources]
    uri_templates = [template.uri_template for template in templates.resource_templates]
    assert "demo://resource/dynamic/text/{resourceId}" in uri_templates
    assert read.contents[0].uri == ARCHITECTURE and isinstance(read.contents[0], types.TextResourceContents)
    assert read.contents[0].text.strip()
    assert dynamic.contents[0].uri == "demo://resource/dynamic/text/7"
    assert {"everything.simple-prompt", "everything.args-prompt"} <= {p.name for p in prompts.prompts}
    assert "Lisbon" in str(prompt.messages[0].content)
    assert "Engineering" in completion.completion.values
    assert not long_run.is_error and progress == [1, 2, 3, 4]
    assert sampled and "hello" in str(sampled[0].messages[0].content)
    assert "sampled by the test client" in str(sampling.content[0])
    assert elicited and "Please provide inputs" in elicited[0].message
    assert "Ada Lovelace" in str(elicitation.content)


async def test_a_quarantined_servers_resources_and_prompts_disappear_and_return_with_list_changed(
    tmp_path: Path,
) -> None:
    downstreams = Downstreams(tmp_path)
    health = {
        "liveness_s": 0.2,
        "readiness_s": 0.3,
        "check_timeout_s": 0.3,
        "call_timeout_s": 0.3,
        "cooldown_s": 0.5,
        "failures_to_quarantine": 2,
        "restart_backoff_s": 0.2,
    }
    config = write_config(
        tmp_path, {"steady": downstreams.fault("steady"), "shaky": downstreams.fault("shaky")}, health=health
    )
    inbox = Inbox()
    async with switchboard(config, message_handler=inbox.message) as client:
        await wait_for_state(client, "shaky", "HEALTHY")
        await wait_for_state(client, "steady", "HEALTHY")
        before = await listed(client)
        read = await client.read_resource("fault://shaky/status")
        greeting = await client.get_prompt("shaky.greet", {"who": "you"})

        downstreams.set_mode("shaky", "hang")
        await wait_for_state(client, "shaky", "QUARANTINE")
        await inbox.wait_for(lambda: changes(inbox) >= (1, 1))
        during = await listed(client)
        with pytest.raises(MCPError) as refused_read:
            await client.read_resource("fault://shaky/status")
        with pytest.raises(MCPError) as refused_prompt:
            await client.get_prompt("shaky.greet", {"who": "you"})
        seen = changes(inbox)

        downstreams.set_mode("shaky", "answer")
        await wait_for_state(client, "shaky", "PROBATION", "HEALTHY")
        await inbox.wait_for(lambda: changes(inbox) >= (seen[0] + 1, seen[1] + 1))
        after = await listed(client)

    assert before == ({"fault://steady/status", "fault://shaky/status"}, {"steady.greet", "shaky.greet"})
    assert '"name": "shaky"' in str(read.contents[0])
    assert "shaky greets you" in str(greeting.messages[0].content)
    assert during == ({"fault://steady/status"}, {"steady.greet"})
    assert "SERVICE_UNAVAILABLE" in refused_read.value.error.message
    assert "shaky quarantined" in refused_read.value.error.message
    assert "SERVICE_UNAVAILABLE" in refused_prompt.value.error.message
    assert after == before


async def listed(client: Client) -> tuple[set[str], set[str]]:
    resources = await client.list_resources()
    prompts = await client.list_prompts()
    return {r.uri for r in resources.resources}, {p.name for p in prompts.prompts}


def changes(inbox: Inbox) -> tuple[int, int]:
    """How many resources and prompts list_changed notifications have arrived."""
    kinds = [type(n) for n in inbox.notifications]
    resources = kinds.count(types.ResourceListChangedNotification)
    return resources, kinds.count(types.PromptListChangedNotification)


async def test_a_uri_two_servers_offer_goes_to_the_first_in_config_order_and_the_clash_is_reported(
    tmp_path: Path,
) -> None:
    downstreams = Downstreams(tmp_path)
    shared = {"FAULT_URI": "shared://status"}
    second = downstreams.fault("second")
    first = downstreams.fault("first")
    second["env"].update(shared)
    first["env"].update(shared)
    config = write_config(tmp_path, {"first": first, "second": second}, health={"liveness_s": 0.2})
    async with switchboard(config) as client:
        await wait_for_state(client, "first", "HEALTHY")
        await wait_for_state(client, "second", "HEALTHY")
        listed = await client.list_resources()
        read = await client.read_resource("shared://status")
        status = (await client.call_tool("switchboard_status", {})).structured_content
    assert [resource.uri for resource in listed.resources] == ["shared://status"]
    assert '"name": "first"' in str(read.contents[0])
    assert status is not None
    assert status["data"]["resource_clashes"] == [
        {"uri": "shared://status", "served_by": "first", "shadowed": ["second"]}
    ]


async def test_an_sse_downstream_is_reached_with_type_sse(tmp_path: Path) -> None:
    entry = everything_entry()
    port = free_port()
    server = subprocess.Popen(
        [entry["command"], entry["args"][0], "sse"],
        env={**os.environ, "PORT": str(port)},
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server)
        config = write_config(
            tmp_path,
            {"legacy": {"type": "sse", "url": f"http://127.0.0.1:{port}/sse"}},
            health={"readiness_s": 60},
        )
        async with switchboard(config) as client:
            status = await wait_for_state(client, "legacy", "HEALTHY", timeout=30)
            echoed = await client.call_tool("legacy.echo", {"message": "over sse"})
            prompts = await client.list_prompts()
    finally:
        stop(server)
    assert status["transport"] == "sse"
    assert "over sse" in str(echoed.content[0])
    assert "legacy.simple-prompt" in {prompt.name for prompt in prompts.prompts}


async def test_subscriptions_survive_a_downstream_restart(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    health = {"liveness_s": 0.2, "readiness_s": 0.5, "restart_backoff_s": 0.2, "failures_to_quarantine": 5}
    config = write_config(tmp_path, {"r": downstreams.fault("r")}, health=health)
    inbox = Inbox()
    async with switchboard(config, message_handler=inbox.message) as client:
        await wait_for_state(client, "r", "HEALTHY")
        await client.subscribe_resource("fault://r/status")
        first = await client.call_tool("r.touch", {})
        await inbox.wait_for(lambda: updates(inbox) == 1)
        pid = (await client.call_tool("r.info", {})).structured_content["pid"]  # type: ignore[index]

        downstreams.set_mode("r", "crash")
        await client.call_tool("r.work", {})
        downstreams.set_mode("r", "answer")
        restarted = await wait_for_state(client, "r", "HEALTHY", "PROBATION")
        with anyio.fail_after(10):
            while (await client.call_tool("r.info", {})).structured_content["pid"] == pid:  # type: ignore[index]
                await anyio.sleep(0.05)
        again = await client.call_tool("r.touch", {})
        await inbox.wait_for(lambda: updates(inbox) == 2)
    assert first.structured_content == {"touched": True}
    assert restarted["restarts"] >= 1
    assert again.structured_content == {"touched": True}, "the new process was subscribed again"


def updates(inbox: Inbox) -> int:
    return sum(isinstance(n, types.ResourceUpdatedNotification) for n in inbox.notifications)
