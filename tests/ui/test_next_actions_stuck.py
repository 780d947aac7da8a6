"""The board's next actions name stuck tasks apart (issue 39): those whose status is blocked,
counted as the BLOCKED column counts them, and the todo tasks waiting on dependencies."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.helpers import call, clean_env, connect, ok_data
from tests.ui.browser import browser_page, ui_server

pytestmark = pytest.mark.slow


async def one_blocked_one_waiting(env: dict[str, str]) -> dict[str, str]:
    async with connect(env) as client:
        first = ok_data(await call(client, "task_create", {"title": "Design the schema"}))
        waiting = ok_data(
            await call(client, "task_create", {"title": "Write migrations", "depends_on": [first["id"]]})
        )
        blocked = ok_data(await call(client, "task_create", {"title": "Get the licence"}))
        ok_data(
            await call(
                client, "task_update", {"task_id": blocked["id"], "status": "blocked", "expected_version": 1}
            )
        )
    return {"waiting": waiting["id"], "blocked": blocked["id"]}


def test_blocked_and_waiting_on_dependencies_are_named_and_counted_apart(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ids = anyio.run(one_blocked_one_waiting, env)
    with ui_server(env, tmp_path, "--no-auth") as base, browser_page() as page:
        page.goto(f"{base}/")
        column = page.locator("#column-blocked .count").inner_text()
        assert column == "1"
        blocked = page.locator("#stuck-blocked")
        assert f"({column})" in blocked.inner_text()
        shown = page.locator("#stuck-blocked + ul li").all_inner_texts()
        assert [text.split(" — ")[0] for text in shown] == [f"{ids['blocked']} Get the licence"]
        waiting = page.locator("#stuck-waiting")
        assert "Waiting on dependencies" in waiting.inner_text() and "(1)" in waiting.inner_text()
        listed = page.locator("#stuck-waiting + ul li").all_inner_texts()
        assert len(listed) == 1 and listed[0].startswith(f"{ids['waiting']} Write migrations")
        assert "Blocked (2)" not in page.locator("#next-actions").inner_text()
        # With a filter the column counts what matches; the stuck tasks stay those of the whole board.
        page.goto(f"{base}/?text=schema")
        assert page.locator("#column-blocked .count").inner_text() == "0"
        assert "(1)" in page.locator("#stuck-blocked").inner_text()
        assert "(1)" in page.locator("#stuck-waiting").inner_text()
