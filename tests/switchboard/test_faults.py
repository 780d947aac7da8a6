"""Hang, probation, malformed and flapping downstreams, against a real switchboard and fault servers."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.helpers import chain_error
from tests.switchboard.helpers import (
    Downstreams,
    call,
    own_answer,
    servers,
    switchboard,
    wait_for_state,
    write_config,
)

pytestmark = pytest.mark.anyio

QUIET = {"liveness_s": 30, "readiness_s": 30, "check_timeout_s": 0.5, "restart_backoff_s": 0.2}
SLOW_S = 2.0


async def test_a_hung_downstream_costs_at_most_the_threshold_then_nothing_until_probation(
    tmp_path: Path,
) -> None:
    downstreams = Downstreams(tmp_path)
    # The cooldown outlasts the refusals by far, however loaded the machine.
    health = {**QUIET, "call_timeout_s": 0.3, "cooldown_s": 5, "failures_to_quarantine": 3}
    config = write_config(tmp_path, {"h": downstreams.fault("h")}, health=health)
    async with switchboard(config) as client:
        await wait_for_state(client, "h", "HEALTHY")
        downstreams.set_mode("h", "hang")
        timed_out = [chain_error(await call(client, "h.work", {"n": n})) for n in range(3)]
        refusals = [chain_error(await call(client, "h.work", {"n": n})) for n in range(10)]
        quarantined = (await servers(client))["h"]
        # Later in the quarantine, its cooldown seen running down, a call is still refused.
        deadline = time.monotonic() + 30
        running_down = quarantined["cooldown_left_s"] - 0.5
        while (later := (await servers(client))["h"])["cooldown_left_s"] > running_down:
            assert later["state"] == "QUARANTINE" and time.monotonic() < deadline, later
            await anyio.sleep(0.05)
        still_refused = chain_error(await call(client, "h.work", {}))
        calls_in_quarantine = downstreams.calls("h")

        downstreams.set_mode("h", "answer")
        await wait_for_state(client, "h", "PROBATION", timeout=30)
        trial = await client.call_tool("h.work", {"trial": True})
        healthy = await wait_for_state(client, "h", "HEALTHY")

    assert [error["code"] for error in timed_out] == ["UPSTREAM_TIMEOUT"] * 3
    assert timed_out[0]["message"].startswith("h.work did not answer in time (no answer within 0.3 s)")
    assert timed_out[0]["details"]["repeated"] is False
    assert {error["code"] for error in refusals} == {"SERVICE_UNAVAILABLE"}
    assert refusals[0]["message"].startswith("h.work is unavailable: h quarantined: 3 consecutive timeouts")
    # Refused at once, no hang: none was sent to the hung server (calls_in_quarantine below), and all
    # ten were answered within the cooldown, before any probe of the server: none held until then.
    assert quarantined["state"] == "QUARANTINE" and quarantined["cooldown_left_s"] > 0
    assert quarantined["failures"]["checks"] == 0
    assert quarantined["failures"]["calls"] == 3
    assert still_refused["code"] == "SERVICE_UNAVAILABLE"
    assert calls_in_quarantine == 3, "no call may reach a quarantined server"
    assert trial.structured_content == {"echo": {"trial": True}, "server": "h", "call": 4}
    assert downstreams.calls("h") == 4
    assert [(t["from"], t["to"]) for t in healthy["transitions"]][-3:] == [
        ("HEALTHY", "QUARANTINE"),
        ("QUARANTINE", "PROBATION"),
        ("PROBATION", "HEALTHY"),
    ]
    assert healthy["transitions"][-1]["reason"] == "trial request succeeded (call work)"


async def test_probation_lets_exactly_one_of_twenty_concurrent_calls_through(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    # A trial takes SLOW_S, long enough for all twenty calls to arrive while it is in flight.
    health = {**QUIET, "call_timeout_s": 3 * SLOW_S, "cooldown_s": 0.5, "cooldown_max_s": 5}
    config = write_config(
        tmp_path,
        {"p": downstreams.fault("p"), "b": downstreams.fault("b")},
        fallbacks={"work": ["p.work", "b.work"]},
        health=health,
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "p", "HEALTHY")
        await wait_for_state(client, "b", "HEALTHY")
        await quarantine(client, downstreams, "p")
        downstreams.set_mode("p", "slow", delay_s=SLOW_S)
        await wait_for_state(client, "p", "PROBATION", timeout=30)
        before = downstreams.calls("p")

        results: list[dict[str, object]] = []

        async def one(n: int) -> None:
            result = await client.call_tool("work", {"n": n})
            assert not result.is_error, result
            results.append(result.structured_content or {})

        async with anyio.create_task_group() as tasks:
            for n in range(20):
                tasks.start_soon(one, n)
        reached_p = downstreams.calls("p") - before
        after_trial = (await servers(client))["p"]

        # While the one trial is in flight, a direct call is refused at once: before the trial ends.
        await quarantine(client, downstreams, "p")
        downstreams.set_mode("p", "slow", delay_s=SLOW_S)
        await wait_for_state(client, "p", "PROBATION", timeout=30)
        trials = downstreams.calls("p")
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(one, 100)
            with anyio.fail_after(30):
                while downstreams.calls("p") == trials:  # the trial has reached p
                    await anyio.sleep(0.02)
            refused = chain_error(await call(client, "p.work", {}))
            trial_answered_first = len(results) > 20

        # A failed trial sends it back to QUARANTINE with the cooldown doubled.
        await quarantine(client, downstreams, "p")
        await wait_for_state(client, "p", "PROBATION", timeout=30)
        with pytest.raises(MCPError):
            await client.call_tool("p.work", {})
        requarantined = (await servers(client))["p"]

    assert reached_p == 1
    served_by = sorted(str(result["server"]) for result in results[:20])
    assert served_by == ["b"] * 19 + ["p"]
    assert after_trial["state"] == "HEALTHY"
    assert after_trial["transitions"][-1]["reason"] == "trial request succeeded (call work)"
    assert refused["code"] == "SERVICE_UNAVAILABLE"
    assert refused["message"].startswith(
        "p.work is unavailable: p on probation: its one trial request is in flight"
    )
    assert not trial_answered_first, "the direct call was held until the trial ended"
    assert results[20]["server"] == "p"
    assert requarantined["state"] == "QUARANTINE"
    assert requarantined["cooldown_s"] == 1.0, "the failed trial doubled the 0.5 s cooldown"
    assert requarantined["transitions"][-1]["reason"].startswith("trial request failed (error: call work:")


async def quarantine(client: Client, downstreams: Downstreams, name: str) -> None:
    """Three failing calls in a row."""
    downstreams.set_mode(name, "fail")
    for _ in range(3):
        with pytest.raises(MCPError):
            await client.call_tool(f"{name}.work", {})
    assert (await servers(client))[name]["state"] == "QUARANTINE"


async def test_malformed_results_and_flapping(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {"m": downstreams.fault("m", mode="malformed"), "f": downstreams.fault("f", mode="flap")},
        health={**QUIET, "call_timeout_s": 1},
    )
    async with switchboard(config) as client:
        await wait_for_state(client, "m", "HEALTHY")
        await wait_for_state(client, "f", "HEALTHY")
        malformed = await client.call_tool("m.work", {})
        flapping = []
        for _ in range(6):
            try:
                flapping.append((await client.call_tool("f.work", {})).structured_content)
            except MCPError as exc:
                flapping.append({"rpc_error": exc.error.message})
        status = await servers(client)

    error = own_answer(malformed)["error"]
    assert malformed.is_error and error["code"] == "UPSTREAM_ERROR"
    assert "Invalid structured content returned by tool work" in error["message"]
    assert error["details"]["failure"] == "malformed result"
    assert status["m"]["failures"]["calls"] == 1
    assert [("rpc_error" in answer) for answer in flapping] == [False, True] * 3
    assert status["f"]["state"] == "HEALTHY", "a success between failures breaks the streak"
    assert status["f"]["failures"] == {"consecutive": 1, "calls": 3, "checks": 0, "connects": 0}


async def test_the_capability_check_runs_at_start_after_failures_and_counts_toward_quarantine(
    tmp_path: Path,
) -> None:
    downstreams = Downstreams(tmp_path)
    deep = {"tool": "work", "arguments": {"probe": True}}
    config = write_config(
        tmp_path,
        {"d": downstreams.fault("d", health={"deep": deep, "deep_s": 30})},
        health={**QUIET, "call_timeout_s": 1, "cooldown_s": 30},
    )
    async with switchboard(config) as client:
        started = await wait_for_state(client, "d", "HEALTHY")
        probes_at_start = downstreams.calls("d")
        downstreams.set_mode("d", "error")
        refused = await client.call_tool("d.work", {})  # the tool's own error: the server answered
        downstreams.set_mode("d", "fail")
        with pytest.raises(MCPError):
            await client.call_tool("d.work", {})
        deadline = time.monotonic() + 30
        while (status := (await servers(client))["d"])["last_checks"]["capability"]["ok"]:
            assert time.monotonic() < deadline, status
            await anyio.sleep(0.02)
        after_failure = status
        with pytest.raises(MCPError):
            await client.call_tool("d.work", {})
        quarantined = (await servers(client))["d"]

    assert started["last_checks"]["capability"]["ok"] is True
    assert probes_at_start == 1, "the start-up round includes the capability call"
    assert refused.is_error and after_failure["failures"]["consecutive"] == 2
    assert "capability check: JSON-RPC error -32603" in after_failure["last_checks"]["capability"]["detail"]
    assert quarantined["state"] == "QUARANTINE"
    assert quarantined["transitions"][-1]["reason"] == "3 consecutive errors"
    assert quarantined["failures"]["checks"] == 1 and quarantined["failures"]["calls"] == 2


async def test_passing_pings_and_restarts_do_not_save_a_tool_that_keeps_failing(tmp_path: Path) -> None:
    """Pings answer between timed-out calls, restarts pass their checks: both still end in QUARANTINE."""
    downstreams = Downstreams(tmp_path)
    health = {
        **QUIET,
        "liveness_s": 0.2,
        "call_timeout_s": 0.5,
        "cooldown_s": 30,
        "failures_to_quarantine": 3,
    }
    config = write_config(
        tmp_path,
        {"t": downstreams.fault("t", mode="timeout"), "k": downstreams.fault("k", mode="crash")},
        health=health,
    )
    async with switchboard(config) as client:
        baseline = await wait_for_state(client, "t", "HEALTHY")
        await wait_for_state(client, "k", "HEALTHY")
        timed_out = []
        for n in range(3):
            if n > 0:  # a liveness ping passes in between
                checks = (await servers(client))["t"]["checks_run"]
                with anyio.fail_after(30):
                    while (await servers(client))["t"]["checks_run"] == checks:
                        await anyio.sleep(0.02)
            timed_out.append(chain_error(await call(client, "t.work", {"n": n})))
        pinged = (await servers(client))["t"]
        refused = [chain_error(await call(client, "t.work", {"n": n})) for n in range(5)]
        t_calls = downstreams.calls("t")

        crashed = []
        for n in range(3):
            crashed.append(chain_error(await call(client, "k.work", {"n": n})))
            after = await wait_for_state(client, "k", "HEALTHY", "QUARANTINE", timeout=10)
            if after["state"] == "QUARANTINE":
                break
        k_refused = chain_error(await call(client, "k.work", {}))
        k_calls = downstreams.calls("k")

    assert [error["code"] for error in timed_out] == ["UPSTREAM_TIMEOUT"] * 3
    assert pinged["state"] == "QUARANTINE", pinged
    assert pinged["checks_run"] > baseline["checks_run"] and pinged["last_checks"]["liveness"]["ok"] is True
    assert pinged["failures"]["checks"] == 0, "only the calls failed; the passing pings did not hide them"
    assert {error["code"] for error in refused} == {"SERVICE_UNAVAILABLE"}
    assert refused[0]["message"].startswith("t.work is unavailable: t quarantined: 3 consecutive")
    assert t_calls == 3, "no call may reach the quarantined server"
    assert {error["code"] for error in crashed} == {"UPSTREAM_ERROR"}
    assert after["state"] == "QUARANTINE", after
    assert k_refused["code"] == "SERVICE_UNAVAILABLE"
    assert k_calls == len(crashed) <= 3
