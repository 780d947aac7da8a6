"""Receipts on the answers of `colibri serve` (SPEC §22, issue 42), proved by a tlog client that is
not ours: Go's golang.org/x/mod/sumdb/note and sumdb/tlog (tests/interop/go/receiptcheck), through
the tlog-tiles `serve --http` serves (SPEC §16).

Over HTTP: a write (task_create), a read (task_list), a system tool answered inline (server_ping)
and a refusal (a read token's task_create: TOOL_NOT_ADMITTED, its row `denied`) each carry
`_meta["io.colibri/receipt"]`. Once an interval checkpoint covers them, Go opens the served
checkpoint with the log's key, finds the receipt's origin in it, proves each index included from the
tiles with the receipt's leaf as the entry, and finds that leaf in the entry bundle. The leaf is
the entry of the call's own row, recomputed here from the row with the rfc8785 package (SPEC §11),
and that row holds the digest of the answer's text. Over stdio the answers carry receipts too,
with the default origin `colibri/<the database's id>`.

Go comes from Debian (`make go-toolchain`); without it the test of the tiles is skipped, and under
CI=true it fails.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import rfc8785

from tests.domains.log.helpers import generate_key
from tests.helpers import clean_env, colibri, missing_part, query
from tests.http.helpers import get, http_client, make_token
from tests.http.helpers import running as serving
from tests.wire import Wire, serve_argv

GOPATH = Path("/usr/share/gocode")
PROGRAM = Path(__file__).parent / "go" / "receiptcheck" / "main.go"
ORIGIN = "example.com/receipts"
RECEIPT = "io.colibri/receipt"


@pytest.fixture(scope="module")
def receiptcheck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None:
        missing_part("Go is needed for the receipt interop test: `make go-toolchain` (Debian golang-go)")
    if not (GOPATH / "src/golang.org/x/mod/sumdb/tlog").is_dir():
        missing_part(
            f"{GOPATH}/src/golang.org/x/mod/sumdb is missing: `make go-toolchain` (golang-golang-x-mod-dev)"
        )
    folder = tmp_path_factory.mktemp("go")
    binary = folder / "receiptcheck"
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": str(GOPATH), "GOCACHE": str(folder / "cache")}
    built = subprocess.run(
        [go, "build", "-o", str(binary), str(PROGRAM)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    return binary


def entry_of(row: Any) -> str:
    """A finished action's log entry (SPEC §11), computed from its row with the rfc8785 package."""
    fields = {
        "type": "action",
        "sequence_no": row["sequence_no"],
        "correlation_id": row["correlation_id"],
        "tool": row["tool"],
        "principal": row["principal"],
        "arguments_sha256": hashlib.sha256(row["arguments"].encode()).hexdigest(),
        "outcome": row["outcome"],
        "result_sha256": row["result_hash"],
        "started_at": row["started_at"],
        "duration_ms": row["duration_ms"],
    }
    return hashlib.sha256(rfc8785.dumps(fields)).hexdigest()


def logged_row(db: Path, index: int) -> Any:
    """The `actions` row whose log entry has that index."""
    [row] = query(
        db,
        "SELECT a.* FROM log_entries e JOIN actions a ON e.kind = 'action' AND e.ref = a.sequence_no"
        " WHERE e.idx = ?",
        (index,),
    )
    return row


def judge(db: Path, tool: str, outcome: str, receipt: dict[str, Any], text: str) -> None:
    """The receipt names the entry of the call's own row, and that row holds the answer's digest."""
    row = logged_row(db, receipt["index"])
    assert (row["tool"], row["outcome"]) == (tool, outcome)
    assert receipt["leaf"] == entry_of(row)
    assert row["result_hash"] == (None if outcome == "denied" else hashlib.sha256(text.encode()).hexdigest())


async def _calls(url: str, writer: str, reader: str) -> list[tuple[str, str, dict[str, Any], str]]:
    """(tool, outcome, receipt, text) of each answer."""
    answers = []
    async with http_client(url, writer) as client:
        for tool, arguments in (("task_create", {"title": "proved"}), ("task_list", {}), ("server_ping", {})):
            result = await client.call_tool(tool, arguments)
            # server_ping never waits for the store (SPEC §8): its receipt comes only when its row
            # commits at once, not while another writer (a checkpoint duty) holds the store.
            for _ in range(50):
                if tool != "server_ping" or (result.meta or {}).get(RECEIPT) is not None:
                    break
                result = await client.call_tool(tool, arguments)
            assert result.is_error is not True, result
            assert result.meta is not None, result
            answers.append((tool, "ok", result.meta[RECEIPT], result.content[0].text))
    async with http_client(url, reader) as client:
        refused = await client.call_tool("task_create", {"title": "not mine to make"})
        assert refused.is_error is True and "TOOL_NOT_ADMITTED" in refused.content[0].text
        answers.append(("task_create", "denied", refused.meta[RECEIPT], refused.content[0].text))
    return answers


def _checkpoint_size(base: str, token: str) -> int:
    status, _, body = get(f"{base}/log/checkpoint", {"Authorization": f"Bearer {token}"})
    return int(body.decode().split("\n")[1]) if status == 200 else 0


def test_serve_http_answers_carry_receipts_a_tlog_client_proves_from_the_tiles(
    receiptcheck: Path, tmp_path: Path
) -> None:
    env = clean_env(tmp_path, COLIBRI_CHECKPOINT_INTERVAL_S="0.2")
    key, vkey = generate_key(tmp_path, env, ORIGIN)
    env.update(COLIBRI_SIGNING_KEY=str(key), COLIBRI_LOG_ORIGIN=ORIGIN)
    writer, reader = make_token(env, "ana", "write"), make_token(env, "rob", "read")
    with serving(env, tmp_path) as server:
        answers = anyio.run(_calls, server.url, writer, reader)
        indexes = [receipt["index"] for _, _, receipt, _ in answers]
        assert len(set(indexes)) == len(answers), "each answer names an entry of its own"
        assert {receipt["origin"] for _, _, receipt, _ in answers} == {ORIGIN}
        deadline = time.monotonic() + 30
        while _checkpoint_size(server.base, reader) <= max(indexes):  # the next interval checkpoint
            assert time.monotonic() < deadline, "no checkpoint covered the receipts"
            time.sleep(0.1)
        for _, _, receipt, _ in answers:
            checked = subprocess.run(
                [str(receiptcheck), server.base, reader, vkey, receipt["origin"], str(receipt["index"]),
                 receipt["leaf"]],
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
            assert checked.returncode == 0, checked.stderr
        wrong = answers[0][2] | {"leaf": answers[1][2]["leaf"]}  # another call's leaf at this index
        refused = subprocess.run(
            [str(receiptcheck), server.base, reader, vkey, ORIGIN, str(wrong["index"]), wrong["leaf"]],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert refused.returncode == 1 and "receiptcheck:" in refused.stderr, "the check can fail"
    for tool, outcome, receipt, text in answers:
        judge(tmp_path / "colibri.db", tool, outcome, receipt, text)


def test_serve_stdio_answers_carry_receipts_under_the_default_origin(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    answers = []
    with Wire(serve_argv(), env, tmp_path / "stderr.log") as wire:
        wire.initialize()
        wire.request("resources/list")  # answered once phase 2 is done (tools/list at once, SPEC §25)
        for tool, arguments in (("task_create", {"title": "on stdio"}), ("server_health", {})):
            result = wire.request("tools/call", {"name": tool, "arguments": arguments})["result"]
            answers.append((tool, "ok", result["_meta"][RECEIPT], result["content"][0]["text"]))
        assert wire.close() == 0
    db = tmp_path / "colibri.db"
    [meta] = query(db, "SELECT database_id FROM log_meta")
    assert {receipt["origin"] for _, _, receipt, _ in answers} == {f"colibri/{meta['database_id']}"}
    for tool, outcome, receipt, text in answers:
        judge(db, tool, outcome, receipt, text)
    entries = colibri("log", "entries", "--db", str(db), env=env).stdout.split()
    receipts = [receipt for _, _, receipt, _ in answers]
    assert [entries[receipt["index"]] for receipt in receipts] == [receipt["leaf"] for receipt in receipts]


def test_on_either_backend_receipts_name_the_entries_the_log_holds(
    backend: str, backend_env: dict[str, str], tmp_path: Path
) -> None:
    """On PostgreSQL too; there a system tool goes without one: its row would wait on the network,
    and a system tool never waits (SPEC §8), so it follows within a second (SPEC §14)."""
    key, _ = generate_key(tmp_path, backend_env, ORIGIN)
    env = {**backend_env, "COLIBRI_SIGNING_KEY": str(key), "COLIBRI_LOG_ORIGIN": ORIGIN}
    with Wire(serve_argv(), env, tmp_path / "stderr.log") as wire:
        wire.initialize()
        wire.request("resources/list")  # answered once phase 2 is done (tools/list at once, SPEC §25)
        results = [
            wire.request("tools/call", {"name": tool, "arguments": arguments})["result"]
            for tool, arguments in (
                ("task_create", {"title": "either"}),
                ("task_list", {}),
                ("server_ping", {}),
            )
        ]
        assert wire.close() == 0
    made, listed, ping = results
    receipts = [made["_meta"][RECEIPT], listed["_meta"][RECEIPT]]
    if backend == "sqlite":
        receipts.append(ping["_meta"][RECEIPT])
    else:
        assert "_meta" not in ping
    entries = colibri("log", "entries", env=env).stdout.split()
    assert [entries[receipt["index"]] for receipt in receipts] == [receipt["leaf"] for receipt in receipts]
    assert {receipt["origin"] for receipt in receipts} == {ORIGIN}
