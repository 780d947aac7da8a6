"""The team lead's questions, answered in headless Chromium after two tokens worked (SPEC §14, issue 27).

Who moved T-1 to done, with what arguments, is that session's record intact, which cards are
Ana's: a real `colibri serve --http` takes the work of two tokens, then `colibri ui` shows it to a
third, read-only, and a raw SQL edit turns the edited session's row to broken.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers import call, clean_env, ok_data
from tests.http.helpers import http_client, make_token, running
from tests.ui.browser import browser_page, screenshot, ui_server
from tests.ui.offline_proof import check_call_proof
from tests.ui.test_browser import verifier_key

pytestmark = pytest.mark.slow

NODE_INSET = 1.0  # pixels: a point this far inside a box's edge is inside it


async def two_tokens_work(url: str, ana: str, bo: str) -> dict[str, Any]:
    """Ana and Bo share the board: T-1 moves to done by both hands, a sealed session and an open one."""
    async with http_client(url, ana) as as_ana, http_client(url, bo) as as_bo:
        t1 = ok_data(
            await call(
                as_ana, "task_create", {"title": "Design the schema", "tags": ["db"], "assignee": "ana"}
            )
        )
        t2 = ok_data(
            await call(
                as_ana,
                "task_create",
                {
                    "title": "Write the migrations for every table of the new schema",
                    "depends_on": [t1["id"]],
                    "tags": ["db"],
                    "assignee": "bo",
                    "priority": "high",
                },
            )
        )
        t3 = ok_data(
            await call(as_bo, "task_create", {"title": "Review docs", "tags": ["docs"], "assignee": "ana"})
        )
        t4 = ok_data(
            await call(
                as_bo,
                "task_create",
                {"title": "Ship the release candidate to staging", "depends_on": [t1["id"], t2["id"]]},
            )
        )
        sealed = ok_data(
            await call(as_ana, "audit_session_start", {"agent_id": "ana-agent", "purpose": "schema"})
        )
        sid = sealed["session_id"]
        await call(as_ana, "thought_record", {"session_id": sid, "kind": "plan", "content": "schema first"})
        version = t1["version"]
        # Ana's move to in_progress leases T-1 to her (SPEC §24): she hands it to review herself.
        for who, status in ((as_ana, "in_progress"), (as_ana, "review")):
            version = ok_data(
                await call(
                    who, "task_update", {"task_id": t1["id"], "status": status, "expected_version": version}
                )
            )["version"]
        await call(
            as_ana,
            "thought_record",
            {"session_id": sid, "kind": "writeback", "content": "schema designed", "task_id": t1["id"]},
        )
        ok_data(
            await call(
                as_bo, "task_update", {"task_id": t1["id"], "status": "done", "expected_version": version}
            )
        )
        await call(
            as_bo, "task_update", {"task_id": t3["id"], "status": "in_progress", "expected_version": 1}
        )
        ok_data(await call(as_ana, "merkle_finalize", {"session_id": sid}))
        other = ok_data(await call(as_bo, "audit_session_start", {"agent_id": "bo-agent", "purpose": "docs"}))
        await call(
            as_bo, "thought_record", {"session_id": other["session_id"], "kind": "plan", "content": "docs"}
        )
    return {
        "t1": t1["id"],
        "t2": t2["id"],
        "t3": t3["id"],
        "t4": t4["id"],
        "sealed": sid,
        "open": other["session_id"],
    }


def row_counts(db_path: Path) -> dict[str, int]:
    with closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as raw:
        tables = [row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: raw.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] for table in tables}


def test_the_lead_s_questions_are_answered_in_chromium(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    tokens = {name: make_token(env, name, "write") for name in ("ana", "bo")}
    lead = make_token(env, "lead", "read")
    with running(env, tmp_path) as server:
        ids = anyio.run(two_tokens_work, server.url, tokens["ana"], tokens["bo"])
    db_path = Path(env["COLIBRI_DB_PATH"])  # the server stopped: its shutdown checkpoint covers every call
    key = verifier_key(db_path)
    before = (hashlib.sha256(db_path.read_bytes()).hexdigest(), row_counts(db_path))
    with ui_server(env, tmp_path, "--verifier-key", key) as base, browser_page() as page:
        page.goto(f"{base}/login")
        page.fill("input[name=token]", lead)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        who_moved_it(page, base, ids)
        what_it_carried(page, base, ids, key)
        whose_cards(page, base, ids)
        page.goto(f"{base}/trail")
        assert integrity_of(page, ids["sealed"]) == "verified"
        assert integrity_of(page, ids["open"]) == "verified"
        screenshot(page, "lead-trail")
        bad_input(page, base)

        # Nothing any page did wrote: the file and every table's row count are as they were.
        assert (hashlib.sha256(db_path.read_bytes()).hexdigest(), row_counts(db_path)) == before

        # Is each session's record intact? One record edited by hand turns its session's row.
        with closing(sqlite3.connect(db_path)) as raw:
            raw.execute("UPDATE thought_records SET content = 'schema skipped' WHERE kind = 'writeback'")
            raw.commit()
        page.goto(f"{base}/trail")
        assert integrity_of(page, ids["sealed"]).startswith("BROKEN at seq 2")
        assert integrity_of(page, ids["open"]) == "verified"
        screenshot(page, "lead-trail-broken")
        page.click(f"text={ids['sealed']}")
        assert page.locator("#chain-status").inner_text() == "BROKEN"
        assert page.locator("#seal-status").inner_text() == "verified"
        assert "stored record hashes" in page.locator("#seal-meaning").inner_text()
        screenshot(page, "lead-session-broken")


def who_moved_it(page: Any, base: str, ids: dict[str, str]) -> None:
    """The history names both tokens, the move to done Bo's, values as values, human times."""
    page.goto(f"{base}/tasks/{ids['t1']}")
    history = page.locator("#task-history")
    principals = history.locator("td.principal").all_inner_texts()
    assert set(principals) == {"ana", "bo"}, principals
    done_row = history.locator("tr[data-version]").last
    assert done_row.locator("td.principal").inner_text() == "bo"
    assert "review → done" in done_row.inner_text().replace("\n", " ")
    assert "None" not in history.inner_text() and "[" not in history.inner_text()
    hover = history.locator("time").first.get_attribute("title") or ""
    assert hover.endswith(" UTC") and "." in hover, hover  # the exact instant, to the microsecond
    assert "." not in history.locator("time").first.inner_text()  # what is read: no microseconds
    screenshot(page, "lead-task-history")


def what_it_carried(page: Any, base: str, ids: dict[str, str], key: str) -> None:
    """Bo's move of T-1 to done, opened: its arguments, and a proof that checks offline."""
    page.goto(f"{base}/audit?tool=task_update&principal=bo")
    assert page.locator("#actions tr[data-call]").count() == 2  # done, and T-3 started
    screenshot(page, "lead-audit")
    page.locator("#actions tr[data-call] a").nth(1).click()
    assert page.locator("#call-principal").inner_text() == "bo"
    assert page.locator("#call-tool").inner_text() == "task_update"
    arguments = json.loads(page.locator("#call-arguments").inner_text())
    assert (arguments["task_id"], arguments["status"], arguments["expected_version"]) == (
        ids["t1"],
        "done",
        3,
    )
    assert page.locator("#proof-status").inner_text() == "the audit path leads to the checkpoint's root"
    assert page.locator("#signature-status").inner_text() == "verified"
    assert page.locator("#row-matches").get_attribute("class") == "ok"
    screenshot(page, "lead-call")
    with page.expect_download() as download:
        page.click("#proof-download")
    bundle = json.loads(Path(download.value.path()).read_text())
    assert bundle["entry"]["principal"] == "bo" and bundle["entry"]["tool"] == "task_update"
    assert check_call_proof(bundle, key) == []
    forged = {**bundle, "entry": {**bundle["entry"], "principal": "ana"}}
    assert "entry_hash is not the SHA-256 of the entry's JCS bytes" in check_call_proof(forged, key)


def whose_cards(page: Any, base: str, ids: dict[str, str]) -> None:
    """Filters narrow the board, combine, and the counts follow; the graph keeps edges off boxes."""
    page.goto(f"{base}/")
    page.fill("#board-filters input[name=assignee]", "ana")
    page.click("#board-filters button")
    page.wait_for_url(f"{base}/?assignee=ana*")
    assert sorted(shown_cards(page)) == sorted([ids["t1"], ids["t3"]])
    assert page.locator("#column-done .count").inner_text() == "1"
    assert page.locator("#column-todo .count").inner_text() == "0"
    screenshot(page, "lead-board-ana")
    page.goto(f"{base}/?tag=db&text=migrations")
    assert shown_cards(page) == [ids["t2"]]
    page.goto(f"{base}/")
    assert page.locator("#dependency-graph path.edge").count() == 3
    assert edges_through_boxes(page) == []
    assert titles_cut_badly(page) == []
    screenshot(page, "lead-board")


def bad_input(page: Any, base: str) -> None:
    """Unknown ids get a 404 page with a way back; a filter too long or not UTF-8 a 400 page."""
    for path, back in (("/tasks/T-999", "/"), ("/audit/99999", "/audit"), ("/trail/S-nope", "/trail")):
        answer = page.goto(f"{base}{path}")
        assert answer is not None and answer.status == 404, path
        assert page.locator("#back").get_attribute("href") == back
    screenshot(page, "lead-not-found")
    answer = page.goto(f"{base}/?tag=%FF")
    assert answer is not None and answer.status == 400
    assert "not UTF-8" in page.locator("#error-message").inner_text()
    answer = page.goto(f"{base}/?assignee={'a' * 201}")
    assert answer is not None and answer.status == 400
    assert "at most 200" in page.locator("#error-message").inner_text()
    screenshot(page, "lead-bad-request")


def shown_cards(page: Any) -> list[str]:
    return list(page.locator(".card").evaluate_all("cards => cards.map(card => card.dataset.task)"))


def integrity_of(page: Any, session_id: str) -> str:
    cell = page.locator(f"#sessions tr[data-session='{session_id}'] td.integrity")
    return (
        " ".join(str(cell.inner_text()).split())
        .replace(" chain intact; open (not sealed)", "")
        .replace(" chain intact; seal matches", "")
    )


def edges_through_boxes(page: Any) -> list[str]:
    """Every (edge, box) where a point of the drawn edge lies inside the box, as the browser draws them."""
    found: list[str] = page.evaluate(
        """inset => {
            const boxes = [...document.querySelectorAll('#dependency-graph g.node')].map(node => {
                const r = node.querySelector('rect');
                return {id: node.dataset.task, x: r.x.baseVal.value, y: r.y.baseVal.value,
                        w: r.width.baseVal.value, h: r.height.baseVal.value};
            });
            const hits = [];
            for (const edge of document.querySelectorAll('#dependency-graph path.edge')) {
                const length = edge.getTotalLength();
                for (let at = 0; at <= length; at += 1) {
                    const p = edge.getPointAtLength(at);
                    for (const b of boxes) {
                        const inX = p.x > b.x + inset && p.x < b.x + b.w - inset;
                        if (inX && p.y > b.y + inset && p.y < b.y + b.h - inset) {
                            hits.push(`${edge.dataset.from}->${edge.dataset.to} through ${b.id}`);
                        }
                    }
                }
            }
            return [...new Set(hits)];
        }""",
        NODE_INSET,
    )
    return found


def titles_cut_badly(page: Any) -> list[str]:
    """Title lines that overflow their box as rendered, or that end inside a word of the title."""
    nodes: list[dict[str, Any]] = page.evaluate(
        """() => [...document.querySelectorAll('#dependency-graph g.node')].map(node => ({
            title: node.querySelector('title').textContent,
            width: node.querySelector('rect').width.baseVal.value,
            lines: [...node.querySelectorAll('text.title')].map(
                t => ({text: t.textContent, length: t.getComputedTextLength()})),
        }))"""
    )
    bad = []
    for node in nodes:
        words = node["title"].split(" · ", 1)[1].split()
        shown = " ".join(line["text"] for line in node["lines"]).removesuffix("…").split()
        if shown != words[: len(shown)]:
            bad.append(f"{node['title']!r} shown as {shown!r}")
        bad += [f"{line['text']!r} overflows" for line in node["lines"] if line["length"] > node["width"] - 8]
    return bad
