"""A switchboard's audit store in `colibri ui` (issue 39): it opens on the audit, not on an empty
board; the tool filter takes a prefix or a glob; a filter that matches nothing says so."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.helpers import clean_env
from tests.switchboard.helpers import FAST, Downstreams, switchboard, wait_for_state, write_config
from tests.ui.browser import browser_page, screenshot, ui_server
from tests.ui.test_next_actions_stuck import one_blocked_one_waiting

pytestmark = pytest.mark.slow


async def routed_calls(tmp_path: Path) -> Path:
    """A real switchboard routes calls to two servers into its audit store; the store's path."""
    downstreams = Downstreams(tmp_path)
    servers = {"github": downstreams.fault("github"), "fs": downstreams.fault("fs")}
    config = write_config(tmp_path, servers, health=FAST, audit={"db": "gateway.db"})
    async with switchboard(config) as client:
        for name in servers:
            await wait_for_state(client, name, "HEALTHY")
        for tool in ("github.work", "github.info", "fs.work"):
            assert not (await client.call_tool(tool, {"value": 1})).is_error, tool
    return tmp_path / "gateway.db"


def tools_shown(page: object) -> set[str]:
    return set(page.locator("#actions td:nth-child(4)").all_inner_texts())  # type: ignore[attr-defined]


def test_a_gateway_store_opens_on_the_audit_and_filters_tools_by_prefix_or_glob(tmp_path: Path) -> None:
    store = anyio.run(routed_calls, tmp_path)
    env = clean_env(tmp_path, COLIBRI_DB_PATH=str(store))
    with ui_server(env, tmp_path, "--no-auth") as base, browser_page() as page:
        page.goto(f"{base}/")
        assert page.url == f"{base}/audit", "a store without tasks opens on its audit"
        assert {"github.work", "github.info", "fs.work"} <= tools_shown(page)

        page.fill("input[name=tool]", "github.")
        page.click("form.filters button")
        page.wait_for_url("**/audit?tool=github.**")
        assert tools_shown(page) == {"github.work", "github.info"}
        screenshot(page, "audit-tool-prefix")

        page.goto(f"{base}/audit?tool=*.work")
        assert tools_shown(page) == {"github.work", "fs.work"}
        page.goto(f"{base}/audit?tool=GitHub.W%3Frk")  # `?` one character, any case
        assert tools_shown(page) == {"github.work"}
        page.goto(f"{base}/audit?tool=github.work")  # a whole name is its own prefix
        assert tools_shown(page) == {"github.work"}
        page.goto(f"{base}/audit?tool=git_*")  # `_` is itself, not LIKE's any character
        assert tools_shown(page) == set()

        page.goto(f"{base}/audit?tool=slack.*&outcome=ok")
        assert tools_shown(page) == set()
        empty = page.locator("#no-calls").inner_text()
        assert empty.startswith("No calls match tool slack.*, outcome ok"), empty
        screenshot(page, "audit-no-match")


def test_a_store_with_tasks_still_opens_on_its_board(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    anyio.run(one_blocked_one_waiting, env)  # tasks, and the calls that made them
    with ui_server(env, tmp_path, "--no-auth") as base, browser_page() as page:
        page.goto(f"{base}/")
        assert page.url == f"{base}/" and page.locator("#column-todo .card").count() == 2
        page.goto(f"{base}/audit?tool=nothing")
        assert page.locator("#no-calls").inner_text().startswith("No calls match tool nothing")
