"""The attack the log exists for: whoever can write the file rewrites history so that the
plain check passes — and `colibri verify --checkpoint <an earlier checkpoint>` still fails,
naming the first entry index that differs. Likewise for the `actions` rows.

The plain `colibri verify --db` checks the log against its records and calls too (SPEC §15: a raw
edit of one row is named by its index), so a rewrite that leaves the log alone fails it already;
only a full forgery, the log rehashed as well, passes it, and the checkpoint still catches that.
`--checkpoint` alone reads the log alone (SPEC §25): a row edit that leaves the log whole passes
it, and `--db` names it; given both, both run (_verify)."""

from __future__ import annotations

import re
import shutil
import sqlite3
from concurrent.futures import Executor
from pathlib import Path

import anyio
import pytest

from colibri.domains.log import tree
from colibri.domains.log.appends import log_action, log_record
from colibri.domains.proofs import sessions
from colibri.domains.trail.canonical import record_hash
from colibri.storage import SQLiteDatabase
from tests.domains.log.helpers import generate_key
from tests.domains.trail.helpers import raw_connection
from tests.helpers import call, clean_env, colibri, connect, ok_data

_FIRST = re.compile(r"^first difference: entry index (\d+)$", re.MULTILINE)
_RANGE = re.compile(r"^first difference: an entry index from (\d+) to (\d+)$", re.MULTILINE)
_ROW = re.compile(r"^log difference:   entry index (\d+): ", re.MULTILINE)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A database written by `colibri serve`: a first session of two records sealed at once (its
    checkpoint stays in the database), two sessions (one sealed) with records and calls, the
    checkpoint made at that seal kept aside, then more calls after it."""
    folder = tmp_path_factory.mktemp("attack")
    env = clean_env(folder)
    key_file, verifier_key = generate_key(folder, env)
    env["COLIBRI_SIGNING_KEY"] = str(key_file)

    async def write() -> str:
        async with connect(env) as client:
            ok_data(await call(client, "audit_session_start", {"session_id": "first"}))
            for i in range(2):
                args = {"session_id": "first", "kind": "plan", "content": f"plan {i}"}
                ok_data(await call(client, "thought_record", args))
            ok_data(await call(client, "merkle_finalize", {"session_id": "first"}))
            for session in ("early", "late"):
                ok_data(await call(client, "audit_session_start", {"session_id": session}))
            for i in range(12):
                args = {"session_id": ("early", "late")[i % 2], "kind": "decision", "content": f"choice {i}"}
                ok_data(await call(client, "thought_record", args))
                ok_data(await call(client, "task_list", {}))
            note = ok_data(await call(client, "merkle_finalize", {"session_id": "early"}))["checkpoint"]
            for i in range(4):
                args = {"session_id": "late", "kind": "observation", "content": f"after {i}"}
                ok_data(await call(client, "thought_record", args))
            return str(note)

    note = anyio.run(write)
    checkpoint = folder / "early.checkpoint"
    checkpoint.write_text(note)
    return folder / "colibri.db", checkpoint, verifier_key


@pytest.fixture
def victim(template: tuple[Path, Path, str], tmp_path: Path) -> Path:
    path = tmp_path / "victim.db"
    shutil.copy(template[0], path)
    return path


def _verify(db: Path, template: tuple[Path, Path, str]) -> tuple[int, str]:
    _, checkpoint, verifier_key = template
    done = colibri(
        "verify",
        "--db",
        str(db),
        "--checkpoint",
        str(checkpoint),
        "--key",
        verifier_key,
        env=clean_env(db.parent),
    )
    return done.returncode, done.stdout + done.stderr


def _checkpoint_only(db: Path, template: tuple[Path, Path, str]) -> tuple[int, str]:
    """`verify --checkpoint` with the store named by the environment: the log alone."""
    _, checkpoint, verifier_key = template
    env = {**clean_env(db.parent), "COLIBRI_DB_PATH": str(db)}
    done = colibri("verify", "--checkpoint", str(checkpoint), "--key", verifier_key, env=env)
    return done.returncode, done.stdout + done.stderr


def _row_difference(output: str) -> int:
    """The entry index `--db`'s part of the report names, once."""
    found = _ROW.findall(output)
    assert len(found) == 1, output
    return int(found[0])


def _plain_verify(db: Path) -> int:
    return colibri("verify", "--db", str(db), env=clean_env(db.parent)).returncode


def _entry_index(db: Path, kind: str, ref: int) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(
            conn.execute("SELECT idx FROM log_entries WHERE kind = ? AND ref = ?", (kind, ref)).fetchone()[0]
        )
    finally:
        conn.close()


def _first_difference(output: str) -> int:
    match = _FIRST.search(output)
    assert match, output
    assert output.count("first difference") == 1, output
    return int(match.group(1))


def _first_difference_range(output: str) -> tuple[int, int]:
    """The range the report places the first difference in, named once and nowhere else."""
    match = _RANGE.search(output)
    assert match, output
    assert output.count("first difference") == 1 and "first at" not in output, output
    assert "..-1" not in output, output
    return int(match.group(1)), int(match.group(2))


def _first_checkpoint_size(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT size FROM log_checkpoints ORDER BY id LIMIT 1").fetchone()[0])
    finally:
        conn.close()


def rewrite_history(path: Path, seq: int, content: str) -> None:
    """Change one old record, recompute every hash after it, re-anchor and re-seal, as an
    attacker who knows the format and holds the file would."""
    conn = raw_connection(path)
    columns = "seq, session_id, kind, content, task_id, agent_id, created_at"
    rows = conn.execute(
        f"SELECT {columns}, prev_hash FROM thought_records WHERE seq >= ? ORDER BY seq", (seq,)
    )
    rows = rows.fetchall()
    prev = rows[0][7]
    conn.execute("BEGIN")
    for row in rows:
        fields = dict(
            zip(
                ("seq", "session_id", "kind", "content", "task_id", "agent_id", "created_at"),
                row[:7],
                strict=True,
            )
        )
        if fields["seq"] == seq:
            fields["content"] = content
        digest = record_hash(**fields, prev_hash=prev)  # type: ignore[arg-type]
        conn.execute(
            "UPDATE thought_records SET content = ?, prev_hash = ?, hash = ? WHERE seq = ?",
            (fields["content"], prev, digest, fields["seq"]),
        )
        prev = digest
    conn.execute("UPDATE trail_head SET hash = ? WHERE id = 1", (prev,))
    sealed = [row[0] for row in conn.execute("SELECT session_id FROM session_seals")]
    for table in ("merkle_nodes", "merkle_leaves", "session_seals"):
        conn.execute(f"DELETE FROM {table}")
    conn.execute("COMMIT")
    conn.close()
    db = SQLiteDatabase.open(path)
    try:
        for session_id in sealed:
            sessions.finalize(db, session_id)
    finally:
        db.close()


def test_the_untouched_database_verifies(victim: Path, template: tuple[Path, Path, str]) -> None:
    code, output = _verify(victim, template)
    assert code == 0, output


def test_a_rewritten_record_passes_the_chain_check_but_not_the_log_nor_the_checkpoint(
    victim: Path, template: tuple[Path, Path, str]
) -> None:
    rewrite_history(victim, 3, "a decision nobody made")
    assert _plain_verify(victim) == 1, "the chain is whole again, but the log no longer matches the record"
    code, output = _verify(victim, template)
    assert code == 1, output
    assert _row_difference(output) == _entry_index(victim, "record", 3)
    assert "record seq 3" in output and "BROKEN" in output
    code, output = _checkpoint_only(victim, template)
    assert code == 0 and "VALID" in output, output  # the log itself is whole: no row is read


def _rebuild_log(path: Path) -> None:
    """Rebuild the whole log from the (rewritten) rows with Colibri's own code: entries and tree."""
    conn = raw_connection(path)
    entries = conn.execute("SELECT kind, ref FROM log_entries ORDER BY idx").fetchall()
    records = dict(conn.execute("SELECT seq, hash FROM thought_records"))
    actions = {
        row[0]: row
        for row in conn.execute(
            "SELECT sequence_no, correlation_id, tool, arguments, outcome, result_hash, started_at,"
            " duration_ms FROM actions"
        )
    }
    db = SQLiteDatabase(conn, path, readonly=False)  # the appends want a transaction's memo
    with db.atomic() as writer:
        writer.execute("DELETE FROM log_entries")
        writer.execute("DELETE FROM log_nodes")
        for kind, ref in entries:
            if kind == tree.RECORD:
                log_record(writer, ref, records[ref])
            else:
                log_action(writer, *actions[ref])
    db.close()


def test_rewriting_the_log_too_still_fails_the_checkpoint(
    victim: Path, template: tuple[Path, Path, str]
) -> None:
    """Issue 23: a full forgery (records, entries and tree rehashed) is reported with the range its
    first difference lies in, once: from the largest signed checkpoint kept in the database that
    still matches to the checkpoint's last entry (it said "entry index 0 ... entries 0..-1")."""
    rewrite_history(victim, 3, "a decision nobody made")
    _rebuild_log(victim)
    assert _plain_verify(victim) == 0
    code, output = _verify(victim, template)
    assert code == 1, output
    assert "history was rewritten" in output
    lo, hi = _first_difference_range(output)
    assert lo == _first_checkpoint_size(victim) > 0, output
    signed_size = int(template[1].read_text().split("\n")[1])
    assert lo <= _entry_index(victim, "record", 3) <= hi == signed_size - 1


def test_a_forgery_with_a_stale_tree_names_its_first_difference_once(
    victim: Path, template: tuple[Path, Path, str]
) -> None:
    """Issue 23: rows and entries rewritten and one stored node left stale: the report said "first
    difference: entry index 0" on one line and "first at entry 12" on the next. One range now,
    ending where the stored tree first stops matching."""
    rewrite_history(victim, 3, "a decision nobody made")
    _rebuild_log(victim)
    conn = raw_connection(victim)
    # The node over entries 24..31 (level 3, index 3): post-order number 2*31 - popcount(31) + 3.
    conn.execute("UPDATE log_nodes SET hash = zeroblob(32) WHERE id = ?", (tree.node_id(3, 3),))
    conn.close()
    code, output = _verify(victim, template)
    assert code == 1, output
    # The stale node covers entries 24..31: some difference lies there, so the first is at most 31.
    assert _first_difference_range(output) == (_first_checkpoint_size(victim), 31), output
    assert "the stored tree no longer matches the entries from entry 24 on" in output


@pytest.mark.parametrize(
    ("change", "sql"),
    [
        ("edited outcome", "UPDATE actions SET outcome = 'error' WHERE sequence_no = ?"),
        ("edited arguments", "UPDATE actions SET arguments = '{\"limit\": 1}' WHERE sequence_no = ?"),
        ("edited duration", "UPDATE actions SET duration_ms = duration_ms + 1 WHERE sequence_no = ?"),
        ("deleted", "DELETE FROM actions WHERE sequence_no = ?"),
    ],
)
def test_an_edited_or_deleted_action_is_named(
    victim: Path, template: tuple[Path, Path, str], change: str, sql: str
) -> None:
    conn = raw_connection(victim)
    target = conn.execute(
        "SELECT sequence_no FROM actions WHERE tool = 'task_list' ORDER BY sequence_no"
    ).fetchall()[2][0]
    conn.execute(sql, (target,))
    conn.close()
    assert _plain_verify(victim) == 1, "the chain does not cover the audit rows; the log does"
    code, output = _verify(victim, template)
    assert code == 1, (change, output)
    assert _row_difference(output) == _entry_index(victim, "action", target)
    assert f"action sequence_no {target}" in output
    assert _checkpoint_only(victim, template)[0] == 0, "the log is whole; --db reads the rows"


def test_an_inserted_action_is_named(victim: Path, template: tuple[Path, Path, str]) -> None:
    conn = raw_connection(victim)
    size = conn.execute("SELECT count(*) FROM log_entries").fetchone()[0]
    conn.execute(
        "INSERT INTO actions (correlation_id, tool, arguments, outcome, result_hash, started_at, duration_ms)"
        " VALUES ('forged', 'task_update', '{}', 'ok', ?, '2020-01-01T00:00:00.000000Z', 1.0)",
        ("00" * 32,),
    )
    forged = conn.execute("SELECT max(sequence_no) FROM actions").fetchone()[0]
    conn.close()
    assert _plain_verify(victim) == 1
    code, output = _verify(victim, template)
    assert code == 1, output
    assert f"action sequence_no {forged} is in no log entry" in output
    assert _row_difference(output) == size  # where the log would have had to hold it


def test_an_action_inserted_between_logged_ones_is_placed_where_the_log_passed_it(
    victim: Path, template: tuple[Path, Path, str]
) -> None:
    conn = raw_connection(victim)
    target = conn.execute(
        "SELECT sequence_no FROM actions WHERE tool = 'task_list' ORDER BY sequence_no"
    ).fetchall()[1][0]
    row = conn.execute("SELECT * FROM actions WHERE sequence_no = ?", (target,)).fetchone()
    conn.execute("DELETE FROM actions WHERE sequence_no = ?", (target,))
    # Put a different call in the freed place: the log's entry for that place no longer matches.
    conn.execute(
        "INSERT INTO actions (sequence_no, correlation_id, tool, arguments, outcome, result_hash, started_at,"
        " duration_ms) VALUES (?, 'forged', 'task_update', '{}', 'ok', ?, ?, 1.0)",
        (target, "00" * 32, row[6]),
    )
    conn.close()
    code, output = _verify(victim, template)
    assert code == 1, output
    assert _row_difference(output) == _entry_index(victim, "action", target)


def test_a_deleted_log_entry_at_the_end_is_named(victim: Path, template: tuple[Path, Path, str]) -> None:
    conn = raw_connection(victim)
    last = conn.execute("SELECT max(idx) FROM log_entries").fetchone()[0]
    conn.execute("DELETE FROM log_entries WHERE idx = ?", (last,))
    conn.close()
    code, output = _verify(victim, template)
    assert code == 1, output
    assert _row_difference(output) == last


def test_the_parallel_fast_path_agrees_with_the_exact_pass(
    victim: Path, template: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker processes over small aligned ranges: the same roots as the one-pass scan, and
    the same verdict on a tampered row."""

    from colibri.domains.log import fastcheck, leaves

    monkeypatch.setattr(fastcheck, "MIN_PER_WORKER", 8)
    monkeypatch.setattr(fastcheck, "CHUNK", 8)
    monkeypatch.setattr(leaves, "BATCH", 5)  # the log-only pass reads a range in several values
    with fastcheck.worker_pool() as pool:  # started before any connection, as the CLI does
        _parallel_agrees(victim, pool)


def _parallel_agrees(victim: Path, pool: Executor | None) -> None:
    from colibri.domains.log import fastcheck, scan

    db = SQLiteDatabase.open(victim, readonly=True)
    try:
        with db.snapshot():
            size = tree.size(db)
            sizes = frozenset({1, 5, 8, 13, 16, size - 1})
            fast = fastcheck.check(victim, db, size, sizes)
            pooled = fastcheck.check(victim, db, size, sizes, pool=pool)
            log_only = fastcheck.check(victim, db, size, sizes, pool=pool, rows=False)
            exact = scan.scan(db, sizes)
        assert fast.ok and pooled.ok and log_only.ok and exact.first_difference is None
        assert fast.roots == pooled.roots == log_only.roots == {**exact.roots, size: exact.root}
    finally:
        db.close()
    for sql in (
        "UPDATE log_nodes SET hash = zeroblob(32) WHERE id = (SELECT min(id) FROM log_nodes)",  # in a chunk
        "UPDATE log_nodes SET hash = zeroblob(32) WHERE id = (SELECT max(id) FROM log_nodes)",  # above
        "INSERT INTO log_nodes (id, hash) VALUES (0, zeroblob(32))",  # a leaf's key: never stored
        "UPDATE log_entries SET entry_hash = zeroblob(32) WHERE idx = 3",  # an entry hash changed
        "UPDATE log_entries SET entry_hash = hex(zeroblob(16)) WHERE idx = 9",  # 32 chars of text
        "DELETE FROM log_entries WHERE idx = 10",  # a hole in the log
        "UPDATE actions SET outcome = 'error' WHERE sequence_no = 5",
    ):
        tampered = victim.with_name("tampered.db")
        shutil.copy(victim, tampered)
        conn = raw_connection(tampered)
        conn.execute(sql)
        conn.close()
        db = SQLiteDatabase.open(tampered, readonly=True)
        try:
            with db.snapshot():
                assert not fastcheck.check(tampered, db, size, frozenset()).ok, sql
                assert not fastcheck.check(tampered, db, size, frozenset(), pool=pool).ok, sql
                assert not fastcheck.check(tampered, db, size, frozenset(), parallel=False).ok, sql
                # Without rows only the log is read: the tree's damage is found, a row's edit is not.
                log_only = fastcheck.check(tampered, db, size, frozenset(), pool=pool, rows=False)
                assert log_only.ok == sql.startswith("UPDATE actions"), sql
        finally:
            db.close()


def test_a_damaged_stored_tree_fails_the_checkpoint(victim: Path, template: tuple[Path, Path, str]) -> None:
    conn = raw_connection(victim)
    conn.execute("UPDATE log_nodes SET hash = zeroblob(32) WHERE id = (SELECT min(id) FROM log_nodes)")
    conn.close()
    assert _plain_verify(victim) == 1
    code, output = _checkpoint_only(victim, template)
    assert code == 1, output
    assert "the stored tree no longer matches the entries from entry 0 on" in output
    # The node over entries 0 and 1: the log alone cannot tell which of them (or the node) changed.
    assert _first_difference_range(output) == (0, 1)
