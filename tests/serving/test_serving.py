"""The serving module both programs share: one log-level parser, one exit code set, one signal policy."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from colibri.core.env import ConfigError
from colibri.serving import logs, signals
from colibri.serving.exits import EXIT_USAGE
from tests.helpers import clean_env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "colibri", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_the_log_level_parser_names_the_valid_levels() -> None:
    assert logs.level_from_env({"COLIBRI_LOG_LEVEL": " DEBUG "}) is logs.LogLevel.DEBUG
    assert logs.level_from_env({}) is logs.LogLevel.INFO
    with pytest.raises(ConfigError, match="COLIBRI_LOG_LEVEL='chatty' is not valid; use one of: error, warn"):
        logs.level_from_env({"COLIBRI_LOG_LEVEL": "chatty"})


def test_both_programs_refuse_a_bad_log_level_the_same_way(tmp_path: Path) -> None:
    config = tmp_path / "board.json"
    config.write_text(json.dumps({"mcpServers": {"time": {"command": "true"}}}))
    env = clean_env(tmp_path, COLIBRI_LOG_LEVEL="chatty")
    serve = _run(["serve"], env)
    board = _run(["switchboard", "--config", str(config)], env)
    assert serve.returncode == board.returncode == EXIT_USAGE
    message = "COLIBRI_LOG_LEVEL='chatty' is not valid; use one of: error, warn, info, debug"
    assert serve.stderr.strip() == f"colibri: {message}"
    assert board.stderr.strip() == f"colibri switchboard: {message}"


@pytest.mark.anyio
async def test_a_stop_signal_runs_the_programs_stop_once() -> None:
    stops: list[str] = []

    async def stop() -> None:
        stops.append("stopped")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(signals.on_stop_signal, stop)
        await anyio.sleep(0.1)  # the receiver is installed
        os.kill(os.getpid(), signal.SIGTERM)
        with anyio.fail_after(5):
            while not stops:
                await anyio.sleep(0.01)
    assert stops == ["stopped"]
