"""`colibri verify --checkpoint` checks the log alone; `verify --db` re-derives each entry from its
row; both flags run both, each reported on its own lines (SPEC §25, §11), on SQLite and PostgreSQL.

One store per backend is written by one `colibri serve` (records and calls, so the log holds both
kinds) and signed by `colibri checkpoint`; the test then edits it as an attacker holding the store
would, one change after another, and asks the real command each time."""

from __future__ import annotations

import re
from pathlib import Path

import anyio

from tests.domains.log.helpers import generate_key
from tests.domains.trail.helpers import RawPostgres, raw_connection
from tests.helpers import call, colibri, connect, ok_data

_RANGE = re.compile(r"^first difference: (?:entry index (\d+)|an entry index from (\d+) to (\d+))$", re.M)
_ROW = re.compile(r"^log difference:   entry index (\d+): ", re.M)


def _write(env: dict[str, str]) -> None:
    async def calls() -> None:
        async with connect(env) as client:
            ok_data(await call(client, "audit_session_start", {"session_id": "split"}))
            for i in range(6):
                args = {"session_id": "split", "kind": "decision", "content": f"choice {i}"}
                ok_data(await call(client, "thought_record", args))
                ok_data(await call(client, "task_list", {}))

    anyio.run(calls)


def _raw(store: str) -> RawPostgres | object:
    return RawPostgres(store) if store.startswith("postgresql://") else raw_connection(Path(store))


def _edit(store: str, sql: str, params: tuple[object, ...] = ()) -> None:
    conn = _raw(store)
    try:
        conn.execute(sql, params)  # type: ignore[attr-defined]
    finally:
        conn.close()  # type: ignore[attr-defined]


def _one(store: str, sql: str) -> int:
    conn = _raw(store)
    try:
        return int(conn.execute(sql).fetchone()[0])  # type: ignore[attr-defined]
    finally:
        conn.close()  # type: ignore[attr-defined]


def test_checkpoint_reads_the_log_alone_db_the_rows_and_both_both(
    backend_env: dict[str, str], store: str, tmp_path: Path
) -> None:
    key_file, verifier_key = generate_key(tmp_path, backend_env)
    env = {**backend_env, "COLIBRI_SIGNING_KEY": str(key_file)}
    _write(env)
    signed = colibri("checkpoint", env=env)
    assert signed.returncode == 0, signed.stderr
    note = tmp_path / "kept.checkpoint"
    note.write_text(signed.stdout)
    named = ["--db-url", store] if store.startswith("postgresql://") else ["--db", store]
    log_only = ("verify", "--checkpoint", str(note), "--key", verifier_key)

    def verify(*args: str) -> tuple[int, str]:
        done = colibri(*args, env=env)  # the store, unless named, is the environment's
        return done.returncode, done.stdout + done.stderr

    code, output = verify(*log_only)
    assert code == 0 and "VALID" in output, output
    assert "records checked" not in output and "against their records and calls" not in output, output
    code, output = verify(*log_only, *named)
    assert code == 0, output
    assert output.count("result:           VALID") == 2, output  # one verdict per check
    assert "(their hashes and tree; no row is read" in output and "records checked:  6 in " in output
    assert re.search(
        r"^log entries: +\d+ checked against their records and calls, and the tree, in ", output, re.M
    )

    # A call's row changed after it was logged: the log itself is untouched.
    number = _one(store, "SELECT min(sequence_no) FROM actions WHERE tool = 'task_list'")
    index = _one(store, f"SELECT idx FROM log_entries WHERE kind = 'action' AND ref = {number}")
    _edit(store, "UPDATE actions SET outcome = 'error' WHERE sequence_no = ?", (number,))
    code, output = verify(*log_only)
    assert code == 0 and "VALID" in output, output  # --checkpoint reads no row
    code, output = verify("verify", *named)
    assert code == 1 and [int(i) for i in _ROW.findall(output)] == [index], output
    code, output = verify(*log_only, *named)
    assert code == 1, output
    checkpoint_part, store_part = output.split("\n\n", 1)
    assert "result:           VALID" in checkpoint_part, output
    assert [int(i) for i in _ROW.findall(store_part)] == [index] and "BROKEN" in store_part, output

    # An entry hash changed in the log (the tree left as it was): --checkpoint names where.
    _edit(store, "UPDATE log_entries SET entry_hash = ? WHERE idx = ?", (bytes(32), index))
    code, output = verify(*log_only)
    assert code == 1 and "BROKEN" in output, output
    match = _RANGE.search(output)
    assert match, output
    lo, hi = (int(match[1]), int(match[1])) if match[1] else (int(match[2]), int(match[3]))
    assert lo <= index <= hi, output
    assert "the stored tree no longer matches the entries" in output, output

    # A signature that does not verify: rejected before the log is read.
    body, _, signature = note.read_text().partition("\n\n")
    line = signature.splitlines()[0]
    flipped = line[:-3] + ("A" if line[-3] != "A" else "B") + line[-2:]
    (tmp_path / "bad.checkpoint").write_text(f"{body}\n\n{flipped}\n")
    code, output = verify("verify", "--checkpoint", str(tmp_path / "bad.checkpoint"), "--key", verifier_key)
    assert code == 1 and "REJECTED" in output, output


def test_checkpoint_flags_used_wrongly_are_refused(tmp_path: Path, backend_env: dict[str, str]) -> None:
    for args in (("--key", "x"), ("--witness-policy", "p"), ("--checkpoint", "f")):
        done = colibri("verify", *args, env=backend_env)
        assert done.returncode == 2, done.stderr
        assert (
            done.stderr.count("\n") == 1
            and "--checkpoint FILE and --key VERIFIER_KEY go together" in done.stderr
        )
