"""The pages in a real headless Chromium after a real agent workflow over MCP (SPEC §13)."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest

from colibri.domains.log.keys import default_key_path, read_signer
from tests.helpers import call, clean_env, connect, ok_data
from tests.http.helpers import make_token
from tests.ui.browser import browser_page, screenshot, ui_server

pytestmark = pytest.mark.slow


async def agent_workflow(env: dict[str, str]) -> dict[str, Any]:
    """Three tasks (T-2 depends on T-1), one moved to done with a writeback, a sealed session."""
    async with connect(env) as client:
        first = ok_data(await call(client, "task_create", {"title": "Design the schema", "tags": ["db"]}))
        second = ok_data(
            await call(
                client,
                "task_create",
                {"title": "Write migrations", "depends_on": [first["id"]], "priority": "high"},
            )
        )
        third = ok_data(await call(client, "task_create", {"title": "Review docs", "assignee": "ana"}))
        session = ok_data(
            await call(client, "audit_session_start", {"agent_id": "agent-1", "purpose": "demo"})
        )
        sid = session["session_id"]
        await call(client, "thought_record", {"session_id": sid, "kind": "plan", "content": "schema first"})
        version = first["version"]
        for status in ("in_progress", "review"):
            moved = ok_data(
                await call(
                    client,
                    "task_update",
                    {"task_id": first["id"], "status": status, "expected_version": version},
                )
            )
            version = moved["version"]
        await call(
            client,
            "thought_record",
            {"session_id": sid, "kind": "writeback", "content": "schema designed", "task_id": first["id"]},
        )
        ok_data(
            await call(
                client, "task_update", {"task_id": first["id"], "status": "done", "expected_version": version}
            )
        )
        await call(
            client, "task_update", {"task_id": third["id"], "status": "in_progress", "expected_version": 1}
        )
        ok_data(await call(client, "merkle_finalize", {"session_id": sid}))
    return {"first": first["id"], "second": second["id"], "third": third["id"], "session": sid}


def verifier_key(db_path: Path) -> str:
    """The verifier key of the signer key `colibri serve` made beside the database."""
    return read_signer(default_key_path(db_path)).verifier().key()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_board_trail_and_tamper_in_chromium(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    ids = anyio.run(agent_workflow, env)
    token = make_token(env, "supervisor", "read")
    db_path = Path(env["COLIBRI_DB_PATH"])
    with ui_server(env, tmp_path, "--verifier-key", verifier_key(db_path)) as base, browser_page() as page:
        # Without the cookie every page asks for the token, once.
        page.goto(f"{base}/")
        assert page.url.startswith(f"{base}/login")
        page.fill("input[name=token]", "col_not-a-token")
        page.click("button[type=submit]")
        assert page.locator("#login-error").is_visible()
        screenshot(page, "login-refused")
        page.fill("input[name=token]", token)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        cookie = next(c for c in page.context.cookies() if c["name"] == "colibri_token")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"

        # The board: each task in its column, the dependency edge drawn between the right nodes.
        assert page.locator(f"#column-done #card-{ids['first']}").count() == 1
        assert page.locator(f"#column-todo #card-{ids['second']}").count() == 1
        assert page.locator(f"#column-in_progress #card-{ids['third']}").count() == 1
        edge = page.locator(
            f"#dependency-graph path.edge[data-from='{ids['first']}'][data-to='{ids['second']}']"
        )
        assert edge.count() == 1
        assert page.locator("#dependency-graph path.edge").count() == 1
        assert ids["second"] in page.locator("#next-actions").inner_text()
        screenshot(page, "board")

        page.click(f"#card-{ids['first']} a.id")
        assert page.locator("#task-status").inner_text() == "done"
        assert "schema designed" in page.locator("#task-records").inner_text()
        screenshot(page, "task")

        page.goto(f"{base}/trail")
        page.click(f"text={ids['session']}")
        assert page.locator("#chain-status").inner_text() == "verified"
        assert page.locator("#seal-status").inner_text() == "verified"
        assert "signature verified" in page.locator("#checkpoint-seal").inner_text()
        assert page.locator("#verifier-key").inner_text().startswith("colibri/")
        assert page.locator("#records tr[data-seq]").count() == 2
        screenshot(page, "trail-verified")

        page.goto(f"{base}/audit?tool=task_update")
        tools = page.locator("#actions td:nth-child(4)").all_inner_texts()
        assert tools and set(tools) == {"task_update"}
        screenshot(page, "audit")

        # No page wrote: the file is byte-identical after every page was read.
        before = digest(db_path)
        for path in ("/", f"/tasks/{ids['first']}", "/trail", f"/trail/{ids['session']}", "/audit"):
            page.goto(f"{base}{path}")
        assert digest(db_path) == before

        # Someone edits a record behind Colibri's back: the trail page flags it.
        with closing(sqlite3.connect(db_path)) as raw:
            raw.execute("UPDATE thought_records SET content = 'schema skipped' WHERE kind = 'writeback'")
            raw.commit()
        page.goto(f"{base}/trail/{ids['session']}")
        assert page.locator("#chain-status").inner_text() == "BROKEN"
        assert "hash_mismatch" in page.locator("#integrity").inner_text()
        screenshot(page, "trail-tampered")
