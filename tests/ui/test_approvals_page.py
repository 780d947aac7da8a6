"""`/approvals` in `colibri ui` (SPEC §22): a held call approved in the page by a second principal
completes. A real switchboard over HTTP with tokens holds ana's `echo.work` call; `colibri ui` over
its audit store, in headless Chromium, shows who, the tool, the arguments in full and the tool's
definition; ana herself is refused with a 409 page naming why, carol approves with a comment, and
ana's call answers. Its log has the held row, carol's decision (via ui, the digest, the comment) and
the `ok` row, in that order, and `colibri verify` passes."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers import clean_env, query
from tests.http.helpers import make_token
from tests.switchboard.audit_helpers import actions, sha256_of, verify
from tests.switchboard.test_approvals import Gateway, work
from tests.ui.browser import browser_page, screenshot, ui_server

pytestmark = pytest.mark.slow

ARGUMENTS = {"value": "drop <b>table</b> users"}


def sign_in(page: Any, base: str, token: str) -> None:
    page.context.clear_cookies()
    page.goto(f"{base}/approvals")
    page.fill("input[name=token]", token)
    page.click("form button[type=submit]")
    page.wait_for_url(f"{base}/approvals")


def test_a_held_call_approved_in_the_page_by_a_second_principal_completes(tmp_path: Path) -> None:
    gateway = Gateway(tmp_path, timeout_s=90)
    answered: dict[str, Any] = {}
    # The ui's own tokens, in the store, before the switchboard opens it: a colibri process that
    # boots on a store marks the rows it finds running as interrupted, and a held call's row is one.
    gateway.store.parent.mkdir()
    env = clean_env(tmp_path, COLIBRI_DB_PATH=str(gateway.store))
    as_ana, as_carol = make_token(env, "ana", "read"), make_token(env, "carol", "read")
    with gateway.running():

        async def call() -> None:
            async with gateway.client("ana") as ana:
                answered.update(await work(ana, ARGUMENTS["value"]))

        caller = threading.Thread(target=anyio.run, args=(call,))
        caller.start()
        approval_id = _held(gateway.store)
        with ui_server(env, tmp_path) as base, browser_page() as page:
            sign_in(page, base, as_ana)
            held = page.locator(f'section.held[data-approval="{approval_id}"]')
            shown = {
                "principal": held.locator(".principal").inner_text(),
                "tool": held.locator(".tool").inner_text(),
                "arguments": json.loads(held.locator("pre.arguments").inner_text()),
                "definition": held.locator("pre.definition").text_content(),
                "pin": held.locator("code.pin").inner_text(),
            }
            held.locator("button.approve").click()
            own_status = page.locator("h1").inner_text(), page.locator("#error-message").inner_text()
            sign_in(page, base, as_carol)
            held = page.locator(f'section.held[data-approval="{approval_id}"]')
            held.locator("textarea[name=comment]").fill("checked with the DBA")
            held.locator("button.approve").click()
            page.wait_for_url(f"{base}/approvals?done={approval_id}")
            notice = page.locator("#decided").inner_text()
            screenshot(page, "approvals-decided")
        caller.join(timeout=60)
        assert not caller.is_alive()

    assert shown["principal"] == "ana" and shown["tool"] == "echo.work", shown
    assert shown["arguments"] == ARGUMENTS  # in full, the markup as text
    assert '"name": "work"' in (shown["definition"] or "") and len(shown["pin"]) == 64, shown
    assert own_status[0] == "Not decided" and "cannot approve its own call" in own_status[1], own_status
    # The page names the approval as it stands when it renders: approved, or already used by the
    # waiting call, which may take it in the moment between the decision and the page.
    assert re.match(rf"{approval_id} (approved|used) by carol: checked with the DBA", notice), notice
    assert answered["ok"] is True and answered["result"]["echo"] == ARGUMENTS, answered

    rows = actions(gateway.store)
    correlation = next(row["correlation_id"] for row in rows if row["outcome"] == "held")
    mine = sorted(
        (row for row in rows if row["correlation_id"] == correlation and row["outcome"] != "denied"),
        key=lambda row: row["log_index"],
    )
    assert [(row["tool"], row["outcome"], row["principal"]) for row in mine] == [
        ("echo.work", "held", "ana"),
        ("switchboard:approvals/approve", "event", "carol"),
        ("echo.work", "ok", "ana"),
    ]
    decision = json.loads(mine[1]["arguments"])
    assert decision["via"] == "ui" and decision["comment"] == "checked with the DBA"
    assert decision["arguments_sha256"] == sha256_of(ARGUMENTS) and decision["pin_sha256"] == shown["pin"]
    assert verify(gateway.store, clean_env(tmp_path))[0] == 0


def _held(store: Path) -> str:
    """The id of the one held call, once the store has it."""
    deadline = time.monotonic() + 30
    while True:
        if store.exists():
            rows = query(store, "SELECT id FROM approvals WHERE state = 'pending'")
            if rows:
                return str(rows[0]["id"])
        assert time.monotonic() < deadline, "the call was never held"
        time.sleep(0.05)
