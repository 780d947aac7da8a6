"""The board shows each lease's holder and expiry and flags the ones that ended (SPEC §24), in Chromium;
a task's page shows its lease, and its history the lease moving from one principal to another."""

from __future__ import annotations

from pathlib import Path

import pytest

from colibri.domains.tasks import service
from colibri.domains.tasks.arguments import CreateTaskArgs, UpdateTaskArgs
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.helpers import clean_env
from tests.ui.browser import browser_page, screenshot, ui_server

pytestmark = pytest.mark.slow


def two_leases(db_path: Path) -> tuple[str, str]:
    """A task ana holds, and one whose lease (bob's) has ended: its expiry moved into the past."""
    db = SQLiteDatabase.open(db_path)
    try:
        migrate(db, MIGRATIONS)
        running, ended = (service.create_task(db, CreateTaskArgs(title=t)).id for t in ("Index", "Backfill"))
        for task_id, who in ((running, "ana"), (ended, "bob")):
            service.update_task(db, UpdateTaskArgs(task_id=task_id, status="in_progress"), principal=who)
        with db.atomic() as conn:
            conn.execute(
                "UPDATE tasks SET lease_expires_at = '2020-01-01T00:00:00.000000Z' WHERE id = ?", (ended,)
            )
    finally:
        db.close()
    return running, ended


def test_the_board_shows_holders_and_expiries_and_flags_ended_leases(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    running, ended = two_leases(Path(env["COLIBRI_DB_PATH"]))
    with ui_server(env, tmp_path, "--no-auth") as base, browser_page() as page:
        page.goto(f"{base}/")
        held = page.locator(f"#card-{running} .lease")
        assert held.get_attribute("data-holder") == "ana" and held.get_attribute("data-expired") == "no"
        assert "leased to ana until" in held.inner_text()
        assert (held.locator("time").get_attribute("title") or "").endswith(" UTC")
        flagged = page.locator(f"#card-{ended} .lease")
        assert (
            flagged.get_attribute("data-holder") == "bob" and flagged.get_attribute("data-expired") == "yes"
        )
        assert "lease ended" in flagged.inner_text() and "take it over" in flagged.inner_text()
        assert page.locator("#column-in_progress #leases-ended").text_content() == "1 lease ended"
        offered = page.locator("#next-actions li").all_inner_texts()
        assert any(text.startswith(f"take_over {ended}") and "bob's lease ended" in text for text in offered)
        screenshot(page, "board-leases")
        page.goto(f"{base}/tasks/{ended}")
        lease = page.locator("#task-lease").inner_text()
        assert lease.startswith("bob until") and "(900 s, token 2)" in lease and "lease ended" in lease
        history = page.locator("#task-history").inner_text()
        assert "lease holder" in history and "lease expires at" in history
        page.goto(f"{base}/tasks/{running}")
        assert "lease ended" not in page.locator("#task-lease").inner_text()
