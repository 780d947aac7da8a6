"""A person decides before a dangerous call runs (SPEC §22): a real switchboard over HTTP with the
tokens ana, bob and carol, in front of a fault server whose `work` counts every call it receives,
and `colibri switchboard approvals` in another process deciding through the audit store.

Held calls send nothing downstream (the server's count proves it); an approval by an approver lets
exactly the one call through; a denial is APPROVAL_DENIED with the comment; no decision within
timeout_s is APPROVAL_PENDING with the approval's id, and the identical retry after an approval
passes once, while other arguments or another principal are held again; the caller cannot approve
its own call, nor can someone the rule does not name (both refused, exit 2, and logged). The log
has the held row, the decision naming the approver, the digest and the comment, then the `ok`
row, and `colibri verify` passes. A restart while a call is held interrupts it; an approval given
before the restart still lets the retried call through.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from colibri.domains.approvals.api import NotDecidable
from colibri.switchboard.audit import decide_held
from colibri.switchboard.config import load
from tests.helpers import clean_env, query
from tests.switchboard.audit_helpers import actions, arguments_column, sha256_of, verify
from tests.switchboard.helpers import (
    FAST,
    Downstreams,
    free_port,
    own_answer,
    stop,
    switchboard,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    wait_for_state,
    write_config,
)
from tests.switchboard.test_http_face import create_token, http_client

pytestmark = pytest.mark.anyio


def approvals(config: Path, *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "colibri", "switchboard", "approvals", *words, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=switchboard_env(),
    )


def held(config: Path) -> list[dict[str, Any]]:
    listed = approvals(config, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    found: list[dict[str, Any]] = json.loads(listed.stdout)
    return found


async def held_call(store: Path, principal: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The pending hold of `principal`'s call with these arguments, once the store has it (read from
    the outside: each `approvals list` would start a process)."""
    with anyio.fail_after(20):
        while True:
            rows = (
                query(
                    store,
                    "SELECT id, arguments FROM approvals WHERE state = 'pending' AND principal = ?",
                    (principal,),
                )
                if store.exists()
                else []
            )
            for row in rows:
                if row["arguments"] is not None and json.loads(row["arguments"]) == arguments:
                    return dict(row)
            await anyio.sleep(0.05)


class Gateway:
    def __init__(self, root: Path, timeout_s: float, rules: list[dict[str, Any]] | None = None) -> None:
        self.root = root
        self.downstreams = Downstreams(root)
        tokens_file = root / "tokens.jsonl"
        self.tokens = {
            name: create_token(name, tokens_file).stdout.strip() for name in ("ana", "bob", "carol")
        }
        section = {
            "rules": rules or [{"tools": ["echo.work"], "approvers": ["ana", "carol"], "mode": "approver"}],
            "timeout_s": timeout_s,
            "ttl_s": 120,
        }
        self.config = write_config(
            root,
            {"echo": self.downstreams.fault("echo")},
            health=FAST,
            auth={"tokens_file": str(tokens_file)},
            audit={"db": "audit/gateway.db"},
            approvals=section,
        )
        self.store = root / "audit" / "gateway.db"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    @contextmanager
    def running(self, log: Path | None = None) -> Iterator[subprocess.Popen[bytes]]:
        """The switchboard, its stderr to `log` when given."""
        command = switchboard_command(self.config, "--http", f"127.0.0.1:{self.port}")
        sink = None if log is None else log.open("ab")
        try:
            board = subprocess.Popen(command, env=switchboard_env(), stderr=sink)
        finally:
            if sink is not None:
                sink.close()
        try:
            wait_for_port(self.port, board)
            yield board
        finally:
            assert stop(board) == 0

    @asynccontextmanager
    async def client(self, principal: str) -> AsyncIterator[Client]:
        async with http_client(self.url, self.tokens[principal]) as client:
            await wait_for_state(client, "echo", "HEALTHY")
            yield client


async def work(client: Client, value: object, progress: list[str] | None = None) -> dict[str, Any]:
    async def heard(done: float, total: float | None, message: str | None) -> None:
        if progress is not None:
            progress.append(message or "")

    result = await client.call_tool("echo.work", {"value": value}, progress_callback=heard)
    if result.is_error:
        return own_answer(result)
    return {"ok": True, "result": result.structured_content}


async def test_held_calls_are_decided_by_an_approver_and_logged(tmp_path: Path) -> None:
    gateway = Gateway(tmp_path, timeout_s=60)
    answers: dict[str, dict[str, Any]] = {}
    progress: list[str] = []
    with gateway.running():
        async with gateway.client("ana") as ana, gateway.client("bob") as bob:

            async def ask(name: str, client: Client, value: object, heard: list[str] | None = None) -> None:
                answers[name] = await work(client, value, heard)

            async with anyio.create_task_group() as calls:
                calls.start_soon(ask, "approved", ana, "one", progress)
                waiting = await held_call(gateway.store, "ana", {"value": "one"})
                listed = held(gateway.config)
                own = approvals(gateway.config, "approve", waiting["id"], "--by", "ana")
                stranger = _refused(gateway.config, waiting["id"], "bob")  # as the command decides
                assert gateway.downstreams.calls("echo") == 0  # held: nothing reached the server
                done = approvals(
                    gateway.config, "approve", waiting["id"], "--by", "carol", "--comment", "fine"
                )

            async with anyio.create_task_group() as calls:
                calls.start_soon(ask, "denied", bob, "two")
                waiting_bob = await held_call(gateway.store, "bob", {"value": "two"})
                denied = approvals(
                    gateway.config, "deny", waiting_bob["id"], "--by", "ana", "--comment", "not today"
                )
            again = _refused(gateway.config, waiting["id"], "carol")
            unknown = _refused(gateway.config, "ap_nosuchcall", "carol")

    assert [(call["id"], call["principal"], call["tool"], call["arguments"]) for call in listed] == [
        (waiting["id"], "ana", "echo.work", {"value": "one"})
    ]
    assert listed[0]["arguments_sha256"] == sha256_of({"value": "one"}) and listed[0]["pin_sha256"]
    assert own.returncode == 2 and "own call" in own.stderr, own.stderr
    assert stranger.why == "not_an_approver" and "not an approver" in str(stranger), stranger
    assert done.returncode == 0 and "by carol" in done.stdout, done.stderr
    assert again.why == "decided" and "used already" in str(again), again
    assert unknown.why == "unknown" and "ap_nosuchcall" in str(unknown), unknown
    assert denied.returncode == 0, denied.stderr

    assert answers["approved"]["ok"] is True, answers
    assert answers["approved"]["result"]["echo"] == {"value": "one"}
    assert any(waiting["id"] in message for message in progress), progress  # told while it waited
    refusal = answers["denied"]["error"]
    assert refusal["code"] == "APPROVAL_DENIED" and "not today" in refusal["message"], refusal
    assert refusal["details"]["comment"] == "not today" and refusal["details"]["denied_by"] == "ana"
    assert gateway.downstreams.calls("echo") == 1  # the denied call never reached the server

    rows = actions(gateway.store)
    correlation = _held_row(rows, "ana", "one")["correlation_id"]
    # The call's rows and its decision (the refused decisions share its correlation id too)
    first = [row for row in rows if row["correlation_id"] == correlation and row["outcome"] != "denied"]
    assert [(row["tool"], row["outcome"], row["principal"]) for row in first] == [
        ("echo.work", "ok", "ana"),  # its row, opened before the hold, finishes last
        ("echo.work", "held", "ana"),
        ("switchboard:approvals/approve", "event", "carol"),
    ]
    assert [row["outcome"] for row in sorted(first, key=lambda row: row["log_index"])] == [
        "held",
        "event",
        "ok",
    ]
    assert json.loads(first[2]["arguments"]) == {
        "approval": waiting["id"],
        "arguments_sha256": sha256_of({"value": "one"}),
        "comment": "fine",
        "pin_sha256": first[1]["result_hash"],
        "principal": "ana",
        "tool": "echo.work",
        "via": "cli",
    }
    assert first[1]["arguments"] == arguments_column({"value": "one"})
    assert first[1]["result_hash"] == listed[0]["pin_sha256"]  # the held row names the tool's pin
    assert "approvals.rules[0]" in first[1]["reason_message"]
    refused = {
        (row["principal"], row["reason"])
        for row in rows
        if row["tool"].startswith("switchboard:approvals/") and row["outcome"] == "denied"
    }
    assert refused == {
        ("ana", "approval:own_call"),
        ("bob", "approval:not_an_approver"),
        ("carol", "approval:decided"),
        ("carol", "approval:unknown"),
    }
    denied_row = next(row for row in rows if row["tool"] == "echo.work" and row["outcome"] == "denied")
    assert denied_row["principal"] == "bob" and denied_row["reason"] == "approval_denied"
    assert verify(gateway.store, clean_env(tmp_path))[0] == 0


async def test_no_decision_is_pending_and_an_approval_covers_one_identical_call(tmp_path: Path) -> None:
    gateway = Gateway(tmp_path, timeout_s=1.5)
    answers: dict[str, dict[str, Any]] = {}
    with gateway.running():
        async with gateway.client("ana") as ana, gateway.client("bob") as bob:

            async def ask(name: str, client: Client, value: object) -> None:
                answers[name] = await work(client, value)

            pending = await work(ana, "three")
            later = pending["error"]["details"]["approval_id"]
            approved_late = approvals(gateway.config, "approve", later, "--by", "carol")
            retried = await work(ana, "three")  # the identical retry: approved, it goes through once
            async with anyio.create_task_group() as calls:  # each held again
                calls.start_soon(ask, "twice", ana, "three")
                calls.start_soon(ask, "other arguments", ana, "four")
                calls.start_soon(ask, "other principal", bob, "three")
            pending_six = await work(bob, "six")
            six = pending_six["error"]["details"]["approval_id"]
            approved_six = approvals(gateway.config, "approve", six, "--by", "carol")
    # A restart while a call is held: that call is interrupted; bob's approval, given before, holds.
    async with anyio.create_task_group() as calls:
        calls.start_soon(_held_until_stopped, gateway, "bob", "seven")
        await held_call(gateway.store, "bob", {"value": "seven"})
        calls.cancel_scope.cancel()
    with gateway.running():
        async with gateway.client("bob") as bob:
            after_restart = await work(bob, "six")

    assert pending["error"]["code"] == "APPROVAL_PENDING", pending
    assert later.startswith("ap_") and pending["error"]["details"]["retry_after_s"] > 0
    assert approved_late.returncode == 0, approved_late.stderr
    assert retried["ok"] is True and retried["result"]["echo"] == {"value": "three"}, retried
    for name in ("twice", "other arguments", "other principal"):
        assert answers[name]["error"]["code"] == "APPROVAL_PENDING", (name, answers[name])
    assert approved_six.returncode == 0, approved_six.stderr
    assert after_restart["ok"] is True and after_restart["result"]["echo"] == {"value": "six"}, after_restart
    assert gateway.downstreams.calls("echo") == 2  # three once, six once
    rows = actions(gateway.store)
    seven = _held_row(rows, "bob", "seven")
    outcomes = {row["outcome"] for row in rows if row["correlation_id"] == seven["correlation_id"]}
    assert outcomes == {"held", "interrupted"}, outcomes
    assert verify(gateway.store, clean_env(tmp_path))[0] == 0


async def _held_until_stopped(gateway: Gateway, principal: str, value: str) -> None:
    with gateway.running():
        async with gateway.client(principal) as client:
            await work(client, value)


def _refused(config: Path, approval_id: str, by: str) -> NotDecidable:
    spec = load(config).audit
    assert spec is not None
    with pytest.raises(NotDecidable) as refused:
        decide_held(spec, approval_id, True, by, "")
    return refused.value


def _held_row(rows: list[dict[str, Any]], principal: str, value: str) -> dict[str, Any]:
    wanted = arguments_column({"value": value})
    return next(
        row
        for row in rows
        if row["outcome"] == "held" and row["principal"] == principal and row["arguments"] == wanted
    )


async def test_a_reload_refuses_a_bad_rule_and_applies_a_good_one(tmp_path: Path) -> None:
    gateway = Gateway(tmp_path, timeout_s=0.5)
    log = tmp_path / "switchboard.log"
    good = json.loads(gateway.config.read_text())
    with gateway.running(log) as board:
        async with gateway.client("ana") as ana:
            held_before = await work(ana, "one")
            bad = good | {"approvals": good["approvals"] | {"rules": [{"tools": ["echo.*"], "mode": "vote"}]}}
            gateway.config.write_text(json.dumps(bad))
            board.send_signal(signal.SIGHUP)
            with anyio.fail_after(20):
                while "reload refused" not in log.read_text():
                    await anyio.sleep(0.05)
            held_still = await work(ana, "two")  # the running config stays
            asking = good | {
                "approvals": good["approvals"] | {"rules": [{"tools": ["echo.*"], "mode": "ask_user"}]}
            }
            gateway.config.write_text(json.dumps(asking))
            board.send_signal(signal.SIGHUP)
            with anyio.fail_after(20):
                while (after := await work(ana, "three"))["error"]["code"] == "APPROVAL_PENDING":
                    pass
    refused = next(line for line in log.read_text().splitlines() if "reload refused" in line)
    assert "approvals.rules[0].mode" in refused and '"ask_user"' in refused, refused
    assert held_before["error"]["code"] == held_still["error"]["code"] == "APPROVAL_PENDING"
    assert after["error"]["code"] == "APPROVAL_REQUIRED", after  # ask_user, and this client cannot elicit


async def test_on_stdio_the_local_caller_is_held_until_an_approver_decides(tmp_path: Path) -> None:
    """The stdio face's lean lane holds the call too: its caller is `local`, an approver decides."""
    downstreams = Downstreams(tmp_path)
    rules = [{"tools": ["echo.work"], "approvers": ["carol"]}]
    config = write_config(
        tmp_path,
        {"echo": downstreams.fault("echo")},
        health=FAST,
        audit={"db": "audit.db"},
        approvals={"rules": rules, "timeout_s": 60},
    )
    spec = load(config).audit
    assert spec is not None
    answers: list[dict[str, Any]] = []
    async with switchboard(config) as client:
        await wait_for_state(client, "echo", "HEALTHY")

        async def call() -> None:
            answers.append(await work(client, "on stdio"))

        async with anyio.create_task_group() as calls:
            calls.start_soon(call)
            waiting = await held_call(tmp_path / "audit.db", "local", {"value": "on stdio"})
            with pytest.raises(NotDecidable) as own:
                decide_held(spec, waiting["id"], True, "local", "")
            decide_held(spec, waiting["id"], True, "carol", "fine on stdio")
    assert own.value.why == "own_call"
    assert answers[0]["ok"] is True and answers[0]["result"]["echo"] == {"value": "on stdio"}, answers
    assert downstreams.calls("echo") == 1
