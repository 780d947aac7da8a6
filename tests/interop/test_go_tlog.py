"""Colibri's log read by an implementation that is not ours (SPEC §16, issue 26): Go's
golang.org/x/mod/sumdb/note and sumdb/tlog, through the tlog-tiles of `serve --http`.

A small Go program (tests/interop/go/tlogcheck) opens the served checkpoint with the log's verifier
key, checks the cosignature/v1 lines that two `colibri witness serve` processes returned (with Go's
crypto/ed25519), rebuilds the tree hash from the tiles, proves and checks the inclusion of every
entry and the consistency with an older checkpoint. Go comes from Debian (`make go-toolchain`:
golang-go and golang-golang-x-mod-dev); without it the test is skipped, and under CI=true it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from colibri.domains.log import tree
from colibri.storage import SQLiteDatabase
from colibri.storage.migrations import migrate
from colibri.tools.catalog import MIGRATIONS
from tests.domains.log.helpers import generate_key
from tests.domains.log.witnesses import make_witness, running, write_policy
from tests.domains.trail.helpers import build_chain, raw_connection
from tests.helpers import clean_env, colibri, missing_part
from tests.http.helpers import make_token
from tests.http.helpers import running as serving

GOPATH = Path("/usr/share/gocode")
PROGRAM = Path(__file__).parent / "go" / "tlogcheck" / "main.go"
ORIGIN = "example.com/go-interop"


@pytest.fixture(scope="module")
def tlogcheck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None:
        missing_part("Go is needed for the tlog interop test: `make go-toolchain` (Debian golang-go)")
    if not (GOPATH / "src/golang.org/x/mod/sumdb/tlog").is_dir():
        missing_part(
            f"{GOPATH}/src/golang.org/x/mod/sumdb is missing: `make go-toolchain` (golang-golang-x-mod-dev)"
        )
    folder = tmp_path_factory.mktemp("go")
    binary = folder / "tlogcheck"
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


@pytest.fixture
def witnessed(tmp_path: Path) -> Iterator[tuple[dict[str, str], str, Path, list[str], str]]:
    """A store of 700 records whose older checkpoint (size 300) is kept aside and whose latest one
    two witnesses cosigned; `serve --http` runs on it."""
    env = clean_env(tmp_path)
    key, vkey = generate_key(tmp_path, env, "example.com/go-interop")
    env.update(COLIBRI_SIGNING_KEY=str(key), COLIBRI_LOG_ORIGIN=ORIGIN)
    token = make_token(env, "go", "read")  # first: it boots the store, which adopts its rows once
    db = SQLiteDatabase.open(tmp_path / "colibri.db")
    migrate(db, MIGRATIONS)
    build_chain(db, 300)
    old = tmp_path / "old.checkpoint"
    db.close()
    old.write_text(colibri("checkpoint", env=env).stdout)
    db = SQLiteDatabase.open(tmp_path / "colibri.db")
    build_chain(db, 400)
    db.close()
    logs = [f"{ORIGIN} {vkey}"]
    w1, w2 = make_witness(tmp_path, env, "w1", logs), make_witness(tmp_path, env, "w2", logs)
    never = make_witness(tmp_path, env, "never", logs)
    env["COLIBRI_WITNESS_POLICY"] = str(write_policy(tmp_path / "policy", [w1, w2], 2))
    with running(w1, w2):
        cosigned = colibri("checkpoint", env=env)
    assert cosigned.returncode == 0 and cosigned.stdout.count("\n— ") == 3, cosigned.stdout + cosigned.stderr
    with serving(env, tmp_path) as server:
        yield env, server.base, old, [w1.vkey, w2.vkey, never.vkey], token


def test_go_reads_the_checkpoint_cosignatures_tiles_and_proofs(
    tlogcheck: Path, witnessed: tuple[dict[str, str], str, Path, list[str], str]
) -> None:
    env, base, old, witnesses, token = witnessed
    vkey = colibri("key", "show", env["COLIBRI_SIGNING_KEY"], env=env).stdout.strip()
    done = subprocess.run(
        [str(tlogcheck), base, token, vkey, str(old), *witnesses],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["origin"] == ORIGIN and found["size"] == 700
    assert found["cosigned"] == ["w1.example", "w2.example"] and found["not_cosigned"] == ["never.example"]
    assert found["inclusion_proved"] == 700 and found["consistent_from"] == 300


def test_go_refuses_tiles_that_do_not_match_the_checkpoint(
    tlogcheck: Path, witnessed: tuple[dict[str, str], str, Path, list[str], str], tmp_path: Path
) -> None:
    """The check can fail: the stored subtree over entries 256..511 (a level-1 tile's second hash)
    changed, and Go's tile reader refuses the tiles."""
    env, base, old, _, token = witnessed
    conn = raw_connection(tmp_path / "colibri.db")
    conn.execute("UPDATE log_nodes SET hash = zeroblob(32) WHERE id = ?", (tree.node_id(8, 1),))
    conn.close()
    vkey = colibri("key", "show", env["COLIBRI_SIGNING_KEY"], env=env).stdout.strip()
    done = subprocess.run(
        [str(tlogcheck), base, token, vkey, str(old)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and "tlogcheck:" in done.stderr, done.stdout
