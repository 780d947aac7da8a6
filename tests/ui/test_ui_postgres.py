"""`colibri ui` with only COLIBRI_DB_URL set: every page over a PostgreSQL store, read-only.

The server's own write counters (`pg_stat_database`) are the witness that no page wrote: they
are read once every backend that wrote before has exited (a backend flushes its counts as it
exits), and again after the pages and the UI are gone. A write made afterwards by `colibri
token create` moves them, so the check can see a write when there is one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2

from colibri.domains.log.keys import read_signer
from tests.helpers import call, clean_env, colibri, connect, ok_data
from tests.helpers.postgres import PostgresServer
from tests.ui.browser import ui_server
from tests.ui.offline_proof import check_call_proof

COUNTERS = (
    "SELECT tup_inserted, tup_updated, tup_deleted FROM pg_stat_database WHERE datname = current_database()"
)


async def workflow(env: dict[str, str], cwd: Path) -> dict[str, str]:
    async with connect(env, cwd=cwd) as client:
        first = ok_data(await call(client, "task_create", {"title": "Design the schema", "assignee": "ana"}))
        ok_data(await call(client, "task_create", {"title": "Write migrations", "depends_on": [first["id"]]}))
        moved = {"task_id": first["id"], "status": "in_progress", "expected_version": 1}
        ok_data(await call(client, "task_update", moved))
        session = ok_data(await call(client, "audit_session_start", {"agent_id": "a", "purpose": "pg"}))
        sid = session["session_id"]
        await call(client, "thought_record", {"session_id": sid, "kind": "plan", "content": "on postgres"})
        ok_data(await call(client, "merkle_finalize", {"session_id": sid}))
    return {"task": first["id"], "session": sid}


def write_counters(url: str) -> tuple[int, int, int]:
    """The database's write counters once no other backend is connected to it (all flushed)."""
    import psycopg

    deadline = time.monotonic() + 30
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            others = conn.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
            if others is not None and others[0] == 0:
                break
            assert time.monotonic() < deadline, "another backend stayed connected to the test's database"
            time.sleep(0.05)
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(COUNTERS).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def test_every_page_reads_a_postgresql_store_and_writes_nothing(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    import psycopg

    url = postgres_server.new_database()
    env = clean_env(tmp_path, COLIBRI_DB_URL=url)
    del env["COLIBRI_DB_PATH"]  # only the URL: the UI must not look for a SQLite file
    ids = anyio.run(workflow, env, tmp_path)
    key = read_signer(Path(env["COLIBRI_SIGNING_KEY"])).verifier().key()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")  # nothing left for autovacuum to write while the pages are read
    before = write_counters(url)
    pages: dict[str, Any] = {}
    ui = ui_server(env, tmp_path, "--no-auth", "--verifier-key", key, cwd=tmp_path)
    with ui as base, httpx2.Client(base_url=base, timeout=30) as http:
        number = _a_task_update(http)
        for path in (
            "/",
            "/?assignee=ana",
            f"/tasks/{ids['task']}",
            "/trail",
            f"/trail/{ids['session']}",
            "/audit",
            f"/audit/{number}",
            f"/audit/{number}/proof.json",
        ):
            answer = http.get(path)
            assert answer.status_code == 200, (path, answer.text[:500])
            pages[path] = answer
        assert http.get("/tasks/T-404").status_code == 404
        assert http.get("/?text=%FF").status_code == 400
    assert not (tmp_path / "data").exists(), "colibri ui looked for the SQLite default beside it"
    assert write_counters(url) == before, "a page wrote to the PostgreSQL store"

    narrowed = pages["/?assignee=ana"].text
    assert f'id="card-{ids["task"]}"' in narrowed and narrowed.count('class="card ') == 1
    assert 'data-state="verified"' in pages["/trail"].text
    assert 'id="chain-status">verified' in pages[f"/trail/{ids['session']}"].text
    assert check_call_proof(json.loads(pages[f"/audit/{number}/proof.json"].text), key) == []

    # The counters do move when something writes: the check above could have failed.
    done = colibri("token", "create", "viewer", "--scope", "read", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert write_counters(url) != before


def _a_task_update(http: httpx2.Client) -> int:
    listing = http.get("/audit", params={"tool": "task_update"})
    assert listing.status_code == 200, listing.text[:500]
    marker = 'data-call="'
    start = listing.text.index(marker) + len(marker)
    return int(listing.text[start : listing.text.index('"', start)])
