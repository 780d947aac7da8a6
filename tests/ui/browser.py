"""Headless Chromium (Debian's `chromium`) driven by Playwright, and `colibri ui` as a subprocess.

Under CI=true a missing browser or Playwright fails the suite; elsewhere it is skipped with the
reason. The browser is never downloaded: Playwright drives the system's /usr/bin/chromium.
Screenshots of the pages are written only when asked: COLIBRI_SCREENSHOTS=1 writes them to
build/screenshots (git-ignored), any other value names the folder; unset, a run writes no file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers import missing_part
from tests.http.helpers import free_port, get

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


def require_browser() -> None:
    missing = []
    if shutil.which(CHROMIUM) is None:
        missing.append(f"{CHROMIUM} (apt-get install chromium; `make test` does it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package (pip install -e '.[dev]')")
    if missing:
        message = "browser tests need " + " and ".join(missing)
        missing_part(message)


@contextmanager
def browser_page() -> Iterator[Any]:
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            yield page
        finally:
            browser.close()


def screenshot(page: Any, name: str) -> None:
    """A full-page screenshot as NAME.png, when COLIBRI_SCREENSHOTS asks for them."""
    wanted = os.environ.get("COLIBRI_SCREENSHOTS", "")
    if not wanted:
        return
    folder = SCREENSHOTS if wanted == "1" else Path(wanted)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


@contextmanager
def ui_server(env: dict[str, str], tmp_path: Path, *args: str, cwd: Path | None = None) -> Iterator[str]:
    """`colibri ui` on a free loopback port; yields its base URL."""
    with ui_process(env, tmp_path, *args, cwd=cwd) as (base, _):
        yield base


@contextmanager
def ui_process(
    env: dict[str, str], tmp_path: Path, *args: str, host: str = "127.0.0.1", cwd: Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`colibri ui` on a free port of `host` (run in `cwd`); yields its loopback base URL and the process."""
    port = free_port()
    log = tmp_path / f"ui-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "colibri", "ui", "--http", f"{host}:{port}", *args],
            env=env,
            cwd=cwd,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, f"colibri ui exited: {log.read_text()}"
            try:
                get(f"{base}/login")
                break
            except OSError:
                assert time.monotonic() < deadline, f"colibri ui never answered: {log.read_text()}"
                time.sleep(0.05)
        yield base, process
    finally:
        process.terminate()
        process.wait(20)
