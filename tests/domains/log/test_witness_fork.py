"""A fork seen from the log's side: two stores under one origin and key, grown to the same size with
different entries. The witness cosigns the first; the second's submission gets a 409 naming the
size it sent (C2SP tlog-witness: the same size with another root), and says so at once instead of
asking again."""

from __future__ import annotations

from pathlib import Path

from tests.domains.log.helpers import generate_key
from tests.domains.log.witnesses import make_witness, running, write_policy
from tests.helpers import clean_env, colibri

ORIGIN = "example.com/forked-log"


def _size(note: str) -> int:
    return int(note.split("\n")[1])


def test_a_checkpoint_of_the_size_a_witness_holds_with_another_root_is_named_a_fork(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    key, vkey = generate_key(tmp_path, env, ORIGIN)
    env.update(COLIBRI_SIGNING_KEY=str(key), COLIBRI_LOG_ORIGIN=ORIGIN)
    w1 = make_witness(tmp_path, env, "w1", [f"{ORIGIN} {vkey}"])
    env["COLIBRI_WITNESS_POLICY"] = str(write_policy(tmp_path / "p", [w1], 1))
    (tmp_path / "fork").mkdir()
    fork_env = {**env, "COLIBRI_DB_PATH": str(tmp_path / "fork" / "colibri.db")}
    with running(w1):
        assert colibri("call", "audit_session_start", '{"session_id": "a"}', env=env).returncode == 0
        honest = colibri("checkpoint", env=env)
        assert honest.returncode == 0 and "— w1.example " in honest.stdout, honest.stderr
        assert colibri("call", "audit_session_start", '{"session_id": "b"}', env=fork_env).returncode == 0
        forked = colibri("checkpoint", env=fork_env)
    assert _size(forked.stdout) == _size(honest.stdout) and forked.stdout != honest.stdout
    assert "— w1.example " not in forked.stdout
    expected = f"holds another checkpoint of size {_size(honest.stdout)} (409): a fork of the log"
    assert expected in forked.stderr, forked.stderr
    assert "409 4 times in a row" not in forked.stderr
