"""Each session hears only its own calls (SPEC §21, the security review's High finding).

A hostile downstream (hostile_server.py, over stdio and over HTTP) logs, reports progress, elicits,
samples and asks for roots during each call, and pushes requests of its own outside any call. Eight
sessions of three tokens, of both eras, make 200 interleaved calls through the switchboard's HTTP
face: no session hears anything of another's calls, no answer returns inside another's call, what
belongs to no single call is dropped and counted at /metrics. On the HTTP downstream every request's
own stream ties what it carries to its call, so each call is also answered by its own client.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from colibri.switchboard.downstream.owners import Drops
from tests.switchboard.helpers import (
    free_port,
    stop,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio

HOSTILE = Path(__file__).with_name("hostile_server.py")
HEALTH = {"liveness_s": 1, "readiness_s": 2, "check_timeout_s": 10, "call_timeout_s": 60}
TOKENS = ("admin", "reader", "guest")
SESSIONS = 8
CALLS = 200
SECRET = re.compile(r"\b(s\d+)-\d+\b")


class Ear:
    """One session's client: everything the switchboard sent it, and what it answers (its name)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.heard: list[str] = []

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.heard.append(f"log: {params.data}")

    async def message(self, message: IncomingMessage) -> None:
        if not isinstance(message, Exception) and not isinstance(message, types.LoggingMessageNotification):
            self.heard.append(f"notification: {message.model_dump_json()}")

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.heard.append(f"elicit: {params.message}")
        return types.ElicitResult(action="accept", content={"who": self.name})

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.heard.append(f"sample: {params.messages[0].content.model_dump_json()}")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text=self.name), model="ear"
        )

    async def roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.heard.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri=f"file:///{self.name}", name=self.name)])

    def foreign(self) -> list[str]:
        """What this session heard of another session's calls, or of no call at all."""
        return [
            text
            for text in self.heard
            if "unasked" in text or any(owner != self.name for owner in SECRET.findall(text))
        ]

    def callbacks(self) -> dict[str, Any]:
        return {
            "logging_callback": self.log,
            "message_handler": self.message,
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "list_roots_callback": self.roots,
        }


def create_token(name: str, path: Path) -> str:
    made = subprocess.run(
        [sys.executable, "-m", "colibri", "token", "create", name, "--file", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


@asynccontextmanager
async def session(url: str, token: str, ear: Ear, mode: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, **ear.callbacks()) as client,
    ):
        yield client


@asynccontextmanager
async def gateway(tmp_path: Path, servers: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, str]]]:
    """The switchboard over HTTP with a tokens file of three tokens: its base URL and the tokens."""
    tokens_file = tmp_path / "tokens.jsonl"
    tokens = {name: create_token(name, tokens_file) for name in TOKENS}
    config = write_config(tmp_path, servers, health=HEALTH, auth={"tokens_file": str(tokens_file)})
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, board)
        yield f"http://127.0.0.1:{port}", tokens
    finally:
        stop(board)


@asynccontextmanager
async def http_downstream(record: Path | None = None) -> AsyncIterator[str]:
    port = free_port()
    env = {**switchboard_env(), "HOSTILE_RECORD": str(record or "/dev/null")}
    server = subprocess.Popen([sys.executable, str(HOSTILE), "--http", f"127.0.0.1:{port}"], env=env)
    try:
        wait_for_port(port, server)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(server)


def stdio_downstream(record: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(HOSTILE)], "env": {"HOSTILE_RECORD": str(record)}}


def dropped(base: str, token: str) -> dict[tuple[str, str], float]:
    """switchboard_dropped_messages_total by (server, kind), from /metrics."""
    text = httpx2.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=10).text
    counts: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "switchboard_dropped_messages_total":
                counts[sample.labels["server"], sample.labels["kind"]] = sample.value
    return counts


async def _heard_progress(into: list[str], done: float, total: float | None, message: str | None) -> None:
    into.append(str(message))


async def interleaved(
    base: str, tokens: dict[str, str], server: str
) -> tuple[list[Ear], list[tuple[str, dict[str, Any], list[str]]]]:
    """Eight sessions (three tokens, both eras) make 200 calls of `server.work` between them, all
    at once: every call's secret names its session. Returns the sessions and each call's answer."""
    ears = [Ear(f"s{n}") for n in range(SESSIONS)]
    answers: list[tuple[str, dict[str, Any], list[str]]] = []

    async def one(n: int) -> None:
        ear = ears[n]
        token = tokens[TOKENS[n % len(TOKENS)]]
        mode = "legacy" if n % 2 == 0 else "auto"
        async with session(f"{base}/mcp", token, ear, mode) as client:
            await wait_for_state(client, server, "HEALTHY", timeout=30)
            for k in range(n, CALLS, SESSIONS):
                progress: list[str] = []
                on_progress = partial(_heard_progress, progress)

                secret = f"{ear.name}-{k}"
                arguments = {"secret": secret, "ask": True, "hold_s": 0.01 * (k % 3)}
                result = await client.call_tool(f"{server}.work", arguments, progress_callback=on_progress)
                assert not result.is_error, result
                assert result.structured_content is not None
                answers.append((secret, result.structured_content, progress))

    async with anyio.create_task_group() as tasks:
        for n in range(SESSIONS):
            tasks.start_soon(one, n)
    assert len(answers) == CALLS
    return ears, answers


def own_or_refused(told: Any, name: str, key: str) -> bool:
    """An answer the downstream got back: its own session's, or a refusal; never another's."""
    if "error" in told:
        return True
    if key == "elicited":
        return bool(told == {"action": "accept", "content": {"who": name}})
    if key == "sampled":
        return bool(told["content"]["text"] == name)
    return bool([root["name"] for root in told["roots"]] == [name])


async def test_over_an_http_downstream_each_call_is_answered_by_its_own_session_and_no_other_hears_it(
    tmp_path: Path,
) -> None:
    async with http_downstream() as url, gateway(tmp_path, {"hh": {"url": url}}) as (base, tokens):
        ears, answers = await interleaved(base, tokens, "hh")
        counts = dropped(base, tokens["admin"])
    for ear in ears:
        assert ear.foreign() == [], (ear.name, ear.foreign()[:5])
        # A log line the server sent on its own channel (the GET stream) belongs to no call.
        assert not any("stray" in text for text in ear.heard), ear.name
    for secret, told, progress in answers:
        owner = secret.split("-")[0]
        assert told["secret"] == secret
        # The request's own stream ties each request to its call: all three are answered, by its session.
        assert told["elicited"] == {"action": "accept", "content": {"who": owner}}, (secret, told)
        assert told["sampled"]["content"]["text"] == owner, (secret, told)
        assert [root["name"] for root in told["roots"]["roots"]] == [owner], (secret, told)
        assert set(progress) <= {f"progress {secret}"}, (secret, progress)
    legacy = [ear for n, ear in enumerate(ears) if n % 2 == 0]
    assert all(any(text.startswith("log: log ") for text in ear.heard) for ear in legacy)
    assert counts.get(("hh", "log"), 0) >= CALLS, counts  # every stray line, dropped and counted


async def test_over_a_stdio_downstream_what_names_no_call_is_dropped_unless_one_call_is_in_flight(
    tmp_path: Path,
) -> None:
    record = tmp_path / "record.jsonl"
    async with gateway(tmp_path, {"hs": stdio_downstream(record)}) as (base, tokens):
        ears, answers = await interleaved(base, tokens, "hs")
        counts = dropped(base, tokens["admin"])
        # One call alone in flight: what the downstream sends during it is that call's.
        alone = Ear("s9")
        async with session(f"{base}/mcp", tokens["guest"], alone, "legacy") as client:
            result = await client.call_tool("hs.work", {"secret": "s9-0", "ask": True})
    for ear in ears:
        assert ear.foreign() == [], (ear.name, ear.foreign()[:5])
    for secret, told, progress in answers:
        owner = secret.split("-")[0]
        for key in ("elicited", "sampled", "roots"):
            assert own_or_refused(told[key], owner, key), (secret, key, told)
        assert set(progress) <= {f"progress {secret}"}, (secret, progress)
    assert sum(count for (server, _), count in counts.items() if server == "hs") > 0, counts
    told = result.structured_content
    assert told is not None
    assert told["elicited"] == {"action": "accept", "content": {"who": "s9"}}
    assert told["sampled"]["content"]["text"] == "s9"
    assert "log: log s9-0" in alone.heard and "elicit: elicit s9-0" in alone.heard
    assert alone.foreign() == []


async def _recorded(record: Path, lines: int) -> list[dict[str, Any]]:
    with anyio.fail_after(30):
        while not record.exists() or len(record.read_text().splitlines()) < lines:
            await anyio.sleep(0.05)
    return [json.loads(line) for line in record.read_text().splitlines()]


async def test_requests_and_logs_of_no_call_are_refused_to_the_downstream_and_counted(tmp_path: Path) -> None:
    record, http_record = tmp_path / "record.jsonl", tmp_path / "http_record.jsonl"
    async with http_downstream(http_record) as url:
        servers = {"hs": stdio_downstream(record), "hh": {"url": url}}
        async with gateway(tmp_path, servers) as (base, tokens):
            ears = [Ear("s0"), Ear("s1")]
            async with (
                session(f"{base}/mcp", tokens["admin"], ears[0], "legacy") as first,
                session(f"{base}/mcp", tokens["reader"], ears[1], "legacy") as second,
            ):
                await wait_for_state(first, "hs", "HEALTHY", timeout=30)
                await wait_for_state(second, "hh", "HEALTHY", timeout=30)
                await first.call_tool("hs.push", {"delay_s": 0.2})
                outcomes = await _recorded(record, 2)
                counts = dropped(base, tokens["admin"])
                await first.call_tool("hh.push", {"delay_s": 0.2})
                pushed_over_http = await _recorded(http_record, 2)
                later = dropped(base, tokens["admin"])
    assert [sorted(outcome) for outcome in outcomes] == [["error"], ["error"]], outcomes
    assert all("belongs to no single call" in outcome["error"] for outcome in outcomes)
    for kind in ("log", "sampling", "elicitation"):
        assert counts.get(("hs", kind), 0) >= 1, counts
        assert later.get(("hh", kind), 0) >= 1, later
    assert [sorted(outcome) for outcome in pushed_over_http] == [["error"], ["error"]], pushed_over_http
    for ear in ears:
        assert ear.foreign() == [], (ear.name, ear.heard)
        assert not any(text.startswith(("log", "elicit", "sample", "roots")) for text in ear.heard), ear.heard


async def test_over_stdio_the_one_clients_call_hears_its_downstream_and_unasked_requests_are_dropped(
    tmp_path: Path,
) -> None:
    record = tmp_path / "record.jsonl"
    config = write_config(tmp_path, {"hs": stdio_downstream(record)}, health=HEALTH)
    for mode in ("legacy", "auto"):
        ear = Ear("s0")
        record.unlink(missing_ok=True)
        async with switchboard(config, mode=mode, **ear.callbacks()) as client:
            await wait_for_state(client, "hs", "HEALTHY", timeout=30)
            result = await client.call_tool("hs.work", {"secret": "s0-1", "ask": True})
            await client.call_tool("hs.push", {"delay_s": 0.2})
            outcomes = await _recorded(record, 2)
        told = result.structured_content
        assert told is not None
        assert told["elicited"] == {"action": "accept", "content": {"who": "s0"}}, (mode, told)
        assert told["sampled"]["content"]["text"] == "s0", (mode, told)
        assert [root["name"] for root in told["roots"]["roots"]] == ["s0"], (mode, told)
        assert all("belongs to no single call" in outcome.get("error", "") for outcome in outcomes), outcomes
        assert not any("unasked" in text for text in ear.heard), (mode, ear.heard)
        if mode == "legacy":
            assert "log: log s0-1" in ear.heard, ear.heard


def test_each_drop_is_counted_and_a_server_is_logged_at_most_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    drops = Drops()
    with caplog.at_level(logging.WARNING, logger="colibri.switchboard"):
        for _ in range(5):
            drops.note("hs", "log")
        drops.note("hs", "sampling")
        drops.note("hh", "elicitation")
    assert drops.counts == {("hs", "log"): 5, ("hs", "sampling"): 1, ("hh", "elicitation"): 1}
    lines = [record.getMessage() for record in caplog.records if "dropped" in record.getMessage()]
    assert [line.split(":")[0] for line in lines] == ["hs", "hh"], lines
