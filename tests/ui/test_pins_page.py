"""Pins a person can read in `colibri ui` (SPEC §21): `/pins` over a real switchboard's audit store
shows every pin, and a changed description as the unified diff of the pinned and the seen
definition with both digests and the exact approve command; a downstream's hostile text (markup,
a bidi override) is shown escaped, never obeyed; the page fits a 1280-pixel window; the header
links it only on a store with pins; it asks for a token like every page."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from tests.helpers import clean_env
from tests.http.helpers import make_token
from tests.switchboard.helpers import switchboard, wait_for_state
from tests.switchboard.test_pins_readable import HOSTILE, WORK, define, digest, listed, setup, withheld_as
from tests.ui.browser import browser_page, screenshot, ui_server

pytestmark = pytest.mark.slow


REVERSED = "svc.wo\u202erk"  # a tool whose name a downstream wrote to read backwards


async def withheld_change(tmp_path: Path) -> tuple[Path, str]:
    """A real switchboard pins `svc`'s tools, then withholds `work` whose description changed to
    HOSTILE, then pins a tool the server renamed with a bidi override; its config and the digest
    of the changed definition of `work`."""
    config, definition, _ = setup(tmp_path)
    async with switchboard(config) as client:
        await wait_for_state(client, "svc", "HEALTHY")
        assert "svc.work" in await listed(client)
        changed = define(definition, {"description": HOSTILE})
        await withheld_as(client, changed)
        define(definition, {"name": REVERSED.removeprefix("svc.")})
        deadline = time.monotonic() + 20
        while REVERSED not in await listed(client):
            assert time.monotonic() < deadline, "the renamed tool was never listed"
            await anyio.sleep(0.05)
    return config, changed


def sign_in(page: object, base: str, token: str) -> None:
    page.goto(f"{base}/pins")  # type: ignore[attr-defined]
    assert "/login?next=" in page.url, "the pins page asks for a token like every page"  # type: ignore[attr-defined]
    page.fill("input[name=token]", token)  # type: ignore[attr-defined]
    page.click("form button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_url(f"{base}/pins")  # type: ignore[attr-defined]


def test_a_changed_description_shows_as_an_escaped_diff_with_both_digests_and_the_approve_command(
    tmp_path: Path,
) -> None:
    config, changed = anyio.run(withheld_change, tmp_path)
    original = digest({})
    env = clean_env(tmp_path, COLIBRI_DB_PATH=str(tmp_path / "gateway.db"))
    token = make_token(env, "reviewer", "read")
    with (
        ui_server(env, tmp_path, "--switchboard-config", str(config)) as base,
        browser_page() as page,
    ):
        page.set_viewport_size({"width": 1280, "height": 900})
        sign_in(page, base, token)
        html = page.content()
        row = page.locator('tr.pin[data-tool="svc.work"]')
        state = row.get_attribute("data-state")
        pinned, seen = row.locator("td.pinned").inner_text(), row.locator("td.seen").inner_text()
        fields = row.locator("td.fields").inner_text()
        diff = page.locator('tr.diff[data-diff-of="svc.work"] pre.diff').inner_text().split("\n")
        command = page.locator('tr.diff[data-diff-of="svc.work"] code.approve').inner_text()
        others = page.locator('tr.pin[data-state="pinned"]').count()
        reversed_name = page.locator('tr.pin[data-tool="svc.wo\\\\u202erk"] td.tool').inner_text()
        nav = page.locator("#nav-pins").get_attribute("href")
        wide = page.evaluate("document.documentElement.scrollWidth")
        screenshot(page, "pins-changed")

    assert state == "withheld" and fields == "description"
    assert pinned == original and seen == changed
    assert (
        f"--- svc.work pinned sha256 {original}" in diff and f"+++ svc.work listed sha256 {changed}" in diff
    )
    assert f'-  "description": "{WORK["description"]}",' in diff
    # The bidi override is its visible escape, and the downstream's markup is text, not a script.
    assert '+  "description": "' + HOSTILE.replace("\u202e", "\\u202e") + '",' in diff
    assert "\u202e" not in html and "<script>alert(1)" not in html
    assert command == f"colibri switchboard pins approve --config {config} svc.work --sha256 {changed}"
    assert others >= 1, "the tools that did not change are listed too, as pinned"
    assert reversed_name == "svc.wo\\u202erk", "a name with a bidi override is shown as its escape"
    assert nav == "/pins"
    assert wide <= 1280, f"the pins page is {wide} px wide in a 1280-px window"


def test_a_store_without_pins_has_no_pins_link(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    make_token(env, "reviewer", "read")  # makes the store: one without a switchboard's pins
    with ui_server(env, tmp_path, "--no-auth") as base, browser_page() as page:
        page.goto(f"{base}/audit")
        links = page.locator("header a").all_inner_texts()
        page.goto(f"{base}/pins")
        empty = page.locator("#no-pins").inner_text()
    assert links == ["Board", "Trail", "Audit"], links
    assert empty.startswith("No tool is pinned in this store")
