"""COLIBRI_PRINCIPAL on stdio (SPEC §20): the unauthenticated local caller is labelled
`local:NAME` in every record a call leaves, and a name outside the allowed set stops the start."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import call, clean_env, colibri, connect, ok_data, query

pytestmark = pytest.mark.anyio


async def _calls(env: dict[str, str]) -> None:
    async with connect(env) as client:
        session = ok_data(await call(client, "audit_session_start", {"purpose": "who"}))["session_id"]
        ok_data(await call(client, "thought_record", {"session_id": session, "kind": "plan", "content": "x"}))
        ok_data(await call(client, "task_create", {"title": "labelled"}))


async def test_colibri_principal_labels_rows_history_and_thought_records(tmp_path: Path) -> None:
    await _calls(clean_env(tmp_path, COLIBRI_PRINCIPAL="ana"))
    db = tmp_path / "colibri.db"
    actions = {row["principal"] for row in query(db, "SELECT principal FROM actions")}
    history = {row["principal"] for row in query(db, "SELECT principal FROM task_history")}
    thoughts = {row["principal"] for row in query(db, "SELECT principal FROM thought_records")}
    assert (actions, history, thoughts) == ({"local:ana"}, {"local:ana"}, {"local:ana"})


async def test_without_colibri_principal_the_caller_is_local(tmp_path: Path) -> None:
    await _calls(clean_env(tmp_path))
    db = tmp_path / "colibri.db"
    assert {row["principal"] for row in query(db, "SELECT principal FROM actions")} == {"local"}


@pytest.mark.parametrize("value", ["ana bob", "x" * 65, "ana:admin", "ånä"])
def test_a_bad_colibri_principal_is_one_line_and_exit_2(tmp_path: Path, value: str) -> None:
    done = colibri("serve", env=clean_env(tmp_path, COLIBRI_PRINCIPAL=value))
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "COLIBRI_PRINCIPAL" in lines[0] and repr(value) in lines[0]
    assert "1 to 64 letters, digits" in lines[0]
    assert done.stdout == ""
    assert not (tmp_path / "colibri.db").exists(), "a refused start opens no store"
