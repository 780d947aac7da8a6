"""The JSON-RPC edge: every malformed message gets the answer JSON-RPC 2.0 prescribes, for both programs.

One process per program reads the whole table; after each case a `ping` with a fresh id marks
where that case's answers end, so a case that went unanswered (or answered twice) shows up.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import termios
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import clean_env
from tests.wire import Wire, serve_argv, switchboard_argv

PARSE, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
NO_REPLY = None


def _call(request_id: int, arguments: str) -> bytes:
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"server_ping","arguments":{arguments}}}}}'
    ).encode()


# (case, line, expected error code or NO_REPLY, expected id of the answer)
CASES: list[tuple[str, bytes, int | None, Any]] = [
    ("truncated JSON", b'{"jsonrpc": "2.0", "id": 1, "method"', PARSE, None),
    ("not UTF-8", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff"}}', PARSE, None),
    ("nesting beyond any parser", b"[" * 100_000, PARSE, None),
    ("plain text", b"hello", PARSE, None),
    ("id is an object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', INVALID_REQUEST, None),
    ("id is an array", b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', INVALID_REQUEST, None),
    ("id is a float", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None),
    ("id is a bool", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
    ("id is null", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None),
    ("batch", b'[{"jsonrpc":"2.0","id":3,"method":"ping"}]', INVALID_REQUEST, None),
    ("empty batch", b"[]", INVALID_REQUEST, None),
    ("a number, not an object", b"42", INVALID_REQUEST, None),
    ("method not a string", b'{"jsonrpc":"2.0","id":7,"method":5}', INVALID_REQUEST, 7),
    ("jsonrpc missing", b'{"id":8,"method":"ping"}', INVALID_REQUEST, 8),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":9,"method":"ping"}', INVALID_REQUEST, 9),
    ("params an array", b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":[1]}', INVALID_REQUEST, 10),
    ("params a string", b'{"jsonrpc":"2.0","id":"s","method":"ping","params":"x"}', INVALID_REQUEST, "s"),
    ("neither request nor response", b'{"jsonrpc":"2.0","id":14}', INVALID_REQUEST, 14),
    ("invalid notification", b'{"jsonrpc":"2.0","method":5}', INVALID_REQUEST, None),
    ("lone surrogate in arguments", _call(12, '{"x":"\\ud800"}'), INVALID_PARAMS, 12),
    ("lone surrogate in a key", _call(15, '{"\\udc00":1}'), INVALID_PARAMS, 15),
    ("arguments nested 200 deep", _call(13, '{"x":' + "[" * 200 + "]" * 200 + "}"), INVALID_PARAMS, 13),
    ("unknown notification", b'{"jsonrpc":"2.0","method":"notifications/whatever"}', NO_REPLY, None),
    ("a response from the client", b'{"jsonrpc":"2.0","id":99,"result":{}}', NO_REPLY, None),
    ("a client error", b'{"jsonrpc":"2.0","id":98,"error":{"code":1,"message":""}}', NO_REPLY, None),
    ("a malformed response", b'{"jsonrpc":"2.0","id":97,"result":5}', NO_REPLY, None),
]


@pytest.fixture(params=["serve", "switchboard"])
def program(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Wire]:
    env = clean_env(tmp_path, COLIBRI_MODE="TEST", COLIBRI_LOG_LEVEL="warn")
    if request.param == "serve":
        argv = serve_argv()
    else:
        config = tmp_path / "switchboard.json"
        command, *args = serve_argv()
        downstream = {"command": command, "args": args, "env": {"COLIBRI_MODE": "MINIMAL"}}
        config.write_text(json.dumps({"mcpServers": {"c": downstream}}))
        argv = switchboard_argv(config)
    with Wire(argv, env, tmp_path / "stderr.log") as wire:
        wire.initialize()
        yield wire


def test_every_malformed_message_gets_the_answer_json_rpc_prescribes(program: Wire) -> None:
    failures = []
    for case, line, code, answer_id in CASES:
        program.send_line(line)
        marker = program.next_id()
        program.send({"jsonrpc": "2.0", "id": marker, "method": "ping"})
        seen = program.replies_until(marker, timeout=10)
        answers = [message for message in seen[:-1] if "method" not in message]
        expected = [] if code is None else [(code, answer_id)]
        got = [(message.get("error", {}).get("code"), message.get("id")) for message in answers]
        if got != expected:
            failures.append(f"{case}: expected {expected}, got {answers}")
        for message in answers:
            if "error" in message and not message["error"].get("message"):
                failures.append(f"{case}: an error without a message: {message}")
    assert not failures, "\n".join(failures)
    assert program.close() == 0
    assert all(json.loads(line).get("jsonrpc") == "2.0" for line in program.lines)


def test_a_line_over_the_limit_is_refused_and_the_stream_goes_on(program: Wire) -> None:
    """65 MiB: over the default 64 MiB cap. It is answered once, skipped whole, and serving goes on."""
    filler = b"x" * (65 * 1024 * 1024)
    program.send_line(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + filler + b'"}}')
    marker = program.next_id()
    program.send({"jsonrpc": "2.0", "id": marker, "method": "ping"})
    seen = program.replies_until(marker, timeout=60)
    assert len(seen) == 2, seen
    refusal, pong = seen
    assert refusal["id"] is None and refusal["error"]["code"] == INVALID_REQUEST
    assert "67,108,864 bytes" in refusal["error"]["message"]
    assert pong["result"] == {}
    assert program.close() == 0


def test_the_limit_is_configurable(tmp_path: Path) -> None:
    env = clean_env(tmp_path, COLIBRI_MODE="MINIMAL", COLIBRI_MAX_MESSAGE_BYTES="4096")
    with Wire(serve_argv(), env, tmp_path / "stderr.log") as wire:
        wire.initialize()
        wire.send_line(b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"' + b"y" * 5000 + b'"}}')
        wire.send_line(b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":"' + b"y" * 3000 + b'"}}')
        refusal, pong = wire.replies_until(6, timeout=10)
        assert refusal["error"]["code"] == INVALID_REQUEST and "4,096 bytes" in refusal["error"]["message"]
        assert pong == {"jsonrpc": "2.0", "id": 6, "result": {}}
        assert wire.close() == 0


# --- whatever stdin and stdout are (SPEC §14: every malformed line is answered, the first included) ---

FIRST_LINE_GARBAGE = b'garbage\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


def _answers(output: bytes) -> list[dict[str, Any]]:
    # A terminal's line discipline turns "\n" into "\r\n" on the way out.
    return [json.loads(line) for line in output.replace(b"\r\n", b"\n").splitlines() if line.strip()]


def _expect_both_answered(answers: list[dict[str, Any]]) -> None:
    assert {"jsonrpc": "2.0", "id": 1, "result": {}} in answers
    [refusal] = [answer for answer in answers if "error" in answer]
    assert refusal["id"] is None and refusal["error"]["code"] == PARSE


@pytest.mark.parametrize("stdin_kind", ["pipe", "file"])
@pytest.mark.parametrize("stdout_kind", ["pipe", "file"])
def test_a_malformed_first_line_is_answered_whatever_stdin_and_stdout_are(
    tmp_path: Path, stdin_kind: str, stdout_kind: str
) -> None:
    """`colibri serve < requests.jsonl > answers.jsonl` used the SDK's own transport, which drops
    a malformed line without a word; so did a pipe into a file."""
    requests, answers = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    requests.write_bytes(FIRST_LINE_GARBAGE)
    with requests.open("rb") as source, answers.open("wb") as sink:
        process = subprocess.Popen(
            serve_argv(),
            stdin=source if stdin_kind == "file" else subprocess.PIPE,
            stdout=sink if stdout_kind == "file" else subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=clean_env(tmp_path),
        )
        out, _ = process.communicate(None if stdin_kind == "file" else FIRST_LINE_GARBAGE, timeout=60)
    assert process.returncode == 0
    _expect_both_answered(_answers(answers.read_bytes() if stdout_kind == "file" else out))


def test_a_malformed_first_line_is_answered_on_a_terminal(tmp_path: Path) -> None:
    """`printf 'garbage\\n{...ping...}\\n' | colibri serve` typed in a terminal: stdout is a tty."""
    controller, terminal = pty.openpty()
    attributes = termios.tcgetattr(terminal)
    attributes[3] &= ~termios.ECHO
    termios.tcsetattr(terminal, termios.TCSANOW, attributes)
    try:
        process = subprocess.Popen(
            serve_argv(),
            stdin=subprocess.PIPE,
            stdout=terminal,
            stderr=subprocess.DEVNULL,
            env=clean_env(tmp_path),
        )
        os.close(terminal)
        terminal = -1
        process.communicate(FIRST_LINE_GARBAGE, timeout=60)
        output = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the terminal's last writer is gone and everything was read
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(controller)
        if terminal != -1:
            os.close(terminal)
    assert process.returncode == 0
    _expect_both_answered(_answers(output))


def test_stdin_at_dev_null_ends_the_session_at_once(tmp_path: Path) -> None:
    done = subprocess.run(
        serve_argv(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=clean_env(tmp_path),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == b""
