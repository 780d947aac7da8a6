"""The switchboard's /status page in headless Chromium: a downstream that hangs moves to QUARANTINE."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)
from tests.ui.browser import browser_page, screenshot

pytestmark = pytest.mark.slow


def _state(page: object, base: str) -> str:
    page.goto(f"{base}/status")  # type: ignore[attr-defined]
    return str(page.locator("#state-h").inner_text())  # type: ignore[attr-defined]


def _until(page: object, base: str, wanted: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while (state := _state(page, base)) != wanted:
        assert time.monotonic() < deadline, f"/status still shows {state}, not {wanted}"
        time.sleep(0.3)


def test_status_page_shows_the_move_to_quarantine(tmp_path: Path) -> None:
    downstreams = Downstreams(tmp_path)
    tokens_file = tmp_path / "tokens.jsonl"
    made = subprocess.run(
        [sys.executable, "-m", "colibri", "token", "create", "ops", "--file", str(tokens_file)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    token = made.stdout.strip()
    health = {"liveness_s": 0.2, "readiness_s": 0.3, "check_timeout_s": 0.5, "failures_to_quarantine": 2}
    config = write_config(
        tmp_path, {"h": downstreams.fault("h")}, health=health, auth={"tokens_file": str(tokens_file)}
    )
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, board)
        with browser_page() as page:
            page.goto(f"{base}/status")
            assert page.url == f"{base}/status/login"
            page.fill("input[name=token]", token)
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/status")
            _until(page, base, "HEALTHY")
            screenshot(page, "status-healthy")
            downstreams.set_mode("h", "hang")
            _until(page, base, "QUARANTINE")
            assert page.locator("#server-h li[data-to='QUARANTINE']").count() >= 1
            assert "cooldown left" in page.locator("#server-h").inner_text()
            screenshot(page, "status-quarantine")
    finally:
        assert stop(board) == 0
