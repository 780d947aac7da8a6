"""Principal names `local`, `switchboard` and any name holding `:` are the gateway's own (SPEC §20):
`colibri token create` refuses them for the database and for a tokens file (exit 2, one line), and
a switchboard whose tokens file holds one refuses to start (exit 2, naming the line)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import clean_env, colibri
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    switchboard_command,
    switchboard_env,
    write_config,
)
from tests.switchboard.test_http_face import create_token


@pytest.mark.parametrize("name", ["local", "switchboard", "group:sre", "local:ana"])
def test_token_create_refuses_a_reserved_name_for_the_database_and_for_a_file(
    tmp_path: Path, name: str
) -> None:
    tokens_file = tmp_path / "tokens.jsonl"
    in_file = create_token(name, tokens_file)
    in_db = colibri("token", "create", name, "--scope", "read", env=clean_env(tmp_path))
    for done in (in_file, in_db):
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and f"the name {name!r} is reserved" in done.stderr, done.stderr
    assert not tokens_file.exists()
    assert create_token("ana", tokens_file).returncode == 0  # any other name is taken as before


def test_a_tokens_file_naming_a_reserved_principal_stops_the_switchboard(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens.jsonl"
    assert create_token("ana", tokens_file).returncode == 0
    with tokens_file.open("a") as file:  # written by hand: the command would have refused it
        file.write(json.dumps({"name": "switchboard", "sha256": "0" * 64}) + "\n")
    config = write_config(
        tmp_path, {"echo": Downstreams(tmp_path).fault("echo")}, auth={"tokens_file": str(tokens_file)}
    )
    done = subprocess.run(
        [*switchboard_command(config), "--http", f"127.0.0.1:{free_port()}"],
        env=switchboard_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"{tokens_file} line 2: the name 'switchboard' is reserved" in done.stderr
