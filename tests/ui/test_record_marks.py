"""A tampered thought record is marked wherever it is shown (issue 39): on the page of the task it
cites as on its session's page, with the record the chain breaks at marked apart."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import anyio
import pytest

from tests.helpers import call, clean_env, connect, ok_data
from tests.ui.browser import browser_page, screenshot, ui_server
from tests.ui.test_browser import agent_workflow

pytestmark = pytest.mark.slow


async def another_session_cites(env: dict[str, str], task_id: str) -> str:
    """A second, intact session whose record cites the same task, written after the first."""
    async with connect(env) as client:
        session = ok_data(await call(client, "audit_session_start", {"agent_id": "agent-2"}))["session_id"]
        ok_data(
            await call(
                client,
                "thought_record",
                {"session_id": session, "kind": "decision", "content": "keep the schema", "task_id": task_id},
            )
        )
    return str(session)


def test_a_tampered_record_is_marked_on_its_task_s_page_and_its_session_s(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ids = anyio.run(agent_workflow, env)
    other = anyio.run(another_session_cites, env, ids["first"])
    db_path = Path(env["COLIBRI_DB_PATH"])
    with closing(sqlite3.connect(db_path)) as raw:
        seqs = dict(
            raw.execute("SELECT kind, seq FROM thought_records WHERE session_id = ?", (ids["session"],))
        )
    tampered, plan = seqs["writeback"], seqs["plan"]
    with ui_server(env, tmp_path, "--no-auth") as base, browser_page() as page:
        task_rows = f"#task-records tr[data-seq='{tampered}']"
        page.goto(f"{base}/tasks/{ids['first']}")
        assert page.locator(task_rows).get_attribute("data-state") == "verified"
        assert page.locator("#task-records tr.broken").count() == 0

        # Someone edits the record behind Colibri's back.
        with closing(sqlite3.connect(db_path)) as raw:
            raw.execute("UPDATE thought_records SET content = 'schema skipped' WHERE seq = ?", (tampered,))
            raw.commit()

        page.goto(f"{base}/tasks/{ids['first']}")
        row = page.locator(task_rows)
        assert row.get_attribute("data-state") == "broken"
        assert "BROKEN here" in row.locator("td.integrity").inner_text()
        assert "hash_mismatch" in row.locator("td.integrity").inner_text()
        intact = page.locator("#task-records tr", has_text=other)
        assert intact.get_attribute("data-state") == "verified", "another session's record is intact"
        screenshot(page, "task-tampered-record")

        page.goto(f"{base}/trail/{ids['session']}")
        assert page.locator("#chain-status").inner_text() == "BROKEN"
        broken_row = page.locator(f"#records tr[data-seq='{tampered}']")
        assert broken_row.get_attribute("class") == "broken at-break"
        assert "BROKEN here" in broken_row.inner_text()
        plan_row = page.locator(f"#records tr[data-seq='{plan}']")
        assert plan_row.get_attribute("data-state") == "broken" and "BROKEN here" not in plan_row.inner_text()
        assert f"at seq {tampered}" in plan_row.inner_text()
        screenshot(page, "session-tampered-row")
