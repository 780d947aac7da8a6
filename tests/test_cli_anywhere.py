"""Options go anywhere: before or after a subcommand's words, in every command (`colibri switchboard
pins approve --config F SERVER.TOOL`, the form of SPEC §15, as well as `--config F pins approve`).
Each command runs as a real process in both orders and must do the same thing."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest

from colibri.cli import build_parser
from colibri.cli.anywhere import subcommands_first
from tests.helpers import clean_env, colibri

_colibri = partial(colibri, timeout=60)


def _untimed(text: str) -> str:
    """`text` with the durations a command reports (`in 0.05 s`) masked: two runs differ there."""
    return re.sub(r"\b\d+(\.\d+)? s\b", "N s", text)


def _same(env: dict[str, str], first: list[str], second: list[str]) -> tuple[int, str, str]:
    """Both orders' exit code, stdout and stderr, asserted equal; argparse refused neither."""
    one, other = _colibri(*first, env=env), _colibri(*second, env=env)
    assert (one.returncode, _untimed(one.stdout), _untimed(one.stderr)) == (
        other.returncode,
        _untimed(other.stdout),
        _untimed(other.stderr),
    )
    assert "usage:" not in one.stderr and "unrecognized arguments" not in one.stderr, one.stderr
    return one.returncode, one.stdout, one.stderr


def test_switchboard_pins_take_config_before_or_after_their_words(tmp_path: Path) -> None:
    config = tmp_path / "switchboard.json"
    config.write_text(json.dumps({"mcpServers": {"svc": {"command": "true"}}, "audit": {"db": "gateway.db"}}))
    env = clean_env(tmp_path)
    code, out, _ = _same(
        env,
        ["switchboard", "pins", "list", "--config", str(config)],
        ["switchboard", "--config", str(config), "pins", "list"],
    )
    assert code == 0 and "no tool is pinned yet" in out
    code, _, err = _same(
        env,
        ["switchboard", "pins", "approve", "--config", str(config), "svc.work", "--by", "ana"],
        ["switchboard", "--config", str(config), "--by", "ana", "pins", "approve", "svc.work"],
    )
    assert code == 2 and "svc.work has no pin" in err  # the store's answer: the line was understood


def test_the_log_commands_take_their_options_before_or_after_the_subcommand(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    assert _colibri("call", "audit_session_start", '{"session_id": "s"}', env=env).returncode == 0
    db = str(tmp_path / "colibri.db")
    code, out, _ = _same(
        env, ["log", "entries", "--db", db, "--to", "0"], ["log", "--db", db, "entries", "--to", "0"]
    )
    assert code == 0 and len(out.split()) == 1
    code, out, _ = _same(
        env, ["prove", "inclusion", "0", "--db", db], ["prove", "--db", db, "inclusion", "0"]
    )
    assert code == 0 and json.loads(out)["index"] == 0
    code, out, _ = _same(
        env, ["verify", "--session", "s", "--db", db], ["--db", db, "verify", "--session", "s"]
    )
    assert code == 0, out


def test_token_and_witness_take_their_options_before_the_subcommand_too(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    made = _colibri("token", "--scope", "read", "create", "ana", env=env)
    assert made.returncode == 0 and made.stdout.startswith("col_"), made.stderr
    listed = _colibri("token", "list", env=env)
    assert "ana\tread\tactive" in listed.stdout
    # A cosigner key that is a file of nonsense: the witness's own check answers, in both orders.
    (tmp_path / "w.key").write_text("not a key\n")
    serve = ["--http", "127.0.0.1:1", "--key", str(tmp_path / "w.key"), "--db", str(tmp_path / "w.db")]
    code, _, err = _same(
        env, ["witness", "serve", *serve, "--log", "o k"], ["witness", *serve, "serve", "--log", "o k"]
    )
    assert code == 2 and err.startswith("colibri witness serve:"), err


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        # an option's value that is also a subcommand's name is the value
        (["switchboard", "--config", "status", "status"], {"action": "status", "config": "status"}),
        # no subcommand: the default one, with its options
        (["switchboard", "--config=F", "--watch"], {"action": "run", "config": "F", "watch": True}),
        (["switchboard", "--conf", "F", "status"], {"action": "status", "config": "F"}),  # a prefix
        (["log", "--db", "F", "entries", "--to", "3"], {"log_command": "entries", "db": "F", "last": 3}),
    ],
)
def test_where_each_option_goes(argv: list[str], parsed: dict[str, object]) -> None:
    parser = build_parser()
    args = vars(parser.parse_args(subcommands_first(parser, argv)))
    assert {key: args[key] for key in parsed} == parsed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["switchboard", "--http", "127.0.0.1:1", "status", "--config", "F"],
            "unrecognized arguments: --http",
        ),
        (["switchboard", "pins", "--config", "F"], "required: list|show|approve"),
        (["switchboard"], "required: --config"),
        (["log", "--db", "F"], "required: ACTION"),
    ],
)
def test_what_argparse_says_when_the_line_is_wrong(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An option the subcommand does not take is named, not read as a subcommand's name."""
    parser = build_parser()
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(subcommands_first(parser, argv))
    assert exited.value.code == 2 and message in capsys.readouterr().err
