"""A property-based fuzzer over the raw JSON-RPC wire of a real `colibri serve` subprocess.

Hypothesis writes `tools/call` lines for all 14 tools (arguments built from each tool's input
schema: right names with wrong, huge, deep or odd values; and arguments that are not objects),
then whole messages of random JSON. Whatever it sends:

- the process never dies, and every request with an id is answered within 5 s;
- every tool answer is an envelope whose text block mirrors `structuredContent`, `isError`
  matches it, and it validates against the tool's advertised `outputSchema` (success envelopes
  always; error envelopes against the Pattern A shape, and against the advertised schema too
  wherever that schema admits errors, as SPEC §1.6 requires);
- no message carries a traceback or an absolute path of the server's machine;
- stdout holds JSON-RPC messages only, and EOF ends the process with exit 0.

`COLIBRI_FUZZ_EXAMPLES` sets the examples per tool (default 200, a few seconds per tool).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colibri.tools.catalog import TOOLS
from tests.domains.skills.helpers import valid, write_skill
from tests.helpers import clean_env
from tests.wire import Wire, serve_argv

EXAMPLES = int(os.environ.get("COLIBRI_FUZZ_EXAMPLES", "200"))
ANSWER_WITHIN_S = 5.0
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

PATTERN_A = {
    "type": "object",
    "required": ["ok", "error"],
    "properties": {
        "ok": {"const": False},
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {
                    "enum": [
                        "INVALID_PARAMS",
                        "HANDLER_ERROR",
                        "TOOL_NOT_ADMITTED",
                        "UNKNOWN_TOOL",
                        # the trail's refusals, Pattern A with their own codes
                        "SESSION_NOT_FOUND",
                        "SESSION_FINALIZED",
                        "TASK_NOT_FOUND",
                    ]
                },
                "message": {"type": "string", "minLength": 1},
                "details": {"type": "object"},
            },
        },
    },
}
SAMPLE_ERROR = {"ok": False, "error": {"code": "HANDLER_ERROR", "message": "x", "details": {}}}
LEAKS = re.compile(r"Traceback \(most recent call last\)|File \"|site-packages|/src/colibri/")


class Server:
    """The fuzzed server, its advertised tools, and the paths its messages must never show."""

    def __init__(self, wire: Wire, tmp: Path) -> None:
        self.wire = wire
        self.private = (str(tmp), sys.prefix, str(Path(__file__).resolve().parents[1]))
        self.tools = {tool["name"]: tool for tool in wire.request("tools/list")["result"]["tools"]}

    def exchange(self, line: bytes, expect: object = None) -> list[dict[str, Any]]:
        """Send `line`; the answers read until `expect`'s is in, or (without `expect`) until a
        marker ping sent after it is answered, so a message that should get no answer is seen
        to get none. Tool calls run in a worker thread while `ping` is answered at once, so
        answers may arrive in either order; each must come within 5 s."""
        assert self.wire.proc.poll() is None, "the server died"
        self.wire.send_line(line)
        if expect is None:
            expect = self.wire.next_id()
            self.wire.send({"jsonrpc": "2.0", "id": expect, "method": "ping"})
            seen = self.wire.replies_until(expect, timeout=ANSWER_WITHIN_S)[:-1]
        else:
            seen = self.wire.replies_until(expect, timeout=ANSWER_WITHIN_S)
        for message in seen:
            self.check_no_leak(message)
        return [message for message in seen if "method" not in message]

    def check_no_leak(self, message: dict[str, Any]) -> None:
        error = message.get("error")
        texts = [error.get("message", "")] if isinstance(error, dict) else []
        result = message.get("result")
        if isinstance(result, dict) and isinstance(result.get("structuredContent"), dict):
            envelope = result["structuredContent"]
            if isinstance(envelope.get("error"), dict):
                texts.append(str(envelope["error"].get("message", "")))
            data = envelope.get("data")
            if isinstance(data, dict) and isinstance(data.get("error"), dict):
                texts.append(str(data["error"].get("message", "")))
        for text in texts:
            assert not LEAKS.search(text), text
            assert not any(path in text for path in self.private), text


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("fuzz")
    write_skill(tmp / "skills", "alpha", valid("alpha"))
    env = clean_env(tmp, COLIBRI_MODE="TEST", COLIBRI_LOG_LEVEL="debug")
    with Wire(serve_argv(), env, tmp / "stderr.log") as wire:
        wire.initialize()
        yield Server(wire, tmp)
        assert wire.proc.poll() is None, "the server died"
        assert wire.close() == 0
        for line in wire.lines:
            message = json.loads(line)
            assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line[:200]
        assert "Traceback" not in wire.stderr_text()


def _scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from([0, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 10**30]),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=50),
        st.sampled_from(
            ["", " ", "T-1", "T-0", "T-99999999999999999999999", "\u0000", "é" * 300, "x" * 70_000]
        ),
    )


def _json() -> st.SearchStrategy[Any]:
    return st.recursive(
        _scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
        ),
        max_leaves=12,
    )


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def _value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values near what the property expects (its enum, its type, its bounds), and far from it."""
    near: list[st.SearchStrategy[Any]] = []
    for option in [schema, *schema.get("anyOf", [])]:
        if "enum" in option:
            near.append(st.sampled_from(option["enum"]))
        if option.get("type") == "integer":
            near.append(st.integers(min_value=-(2**70), max_value=2**70))
        if option.get("type") == "string":
            near.append(st.text(max_size=300))
        if option.get("type") == "array":
            near.append(st.lists(st.text(max_size=20), max_size=30))
    near.append(st.sampled_from([_deep(150), _deep(190)]))
    return st.one_of(*near, _json())


def _arguments(tool_name: str) -> st.SearchStrategy[Any]:
    properties = next(tool for tool in TOOLS if tool.name == tool_name).input_schema.get("properties", {})
    fields = st.fixed_dictionaries({}, optional={name: _value_for(spec) for name, spec in properties.items()})
    extra = st.dictionaries(st.text(max_size=10), _json(), max_size=3)
    mixed = st.tuples(fields, extra).map(lambda pair: {**pair[1], **pair[0]})
    return st.one_of(fields, mixed, _json())


def _check_answer(server: Server, tool_name: str, answers: list[dict[str, Any]], request_id: int) -> None:
    mine = [message for message in answers if message.get("id") == request_id]
    assert len(mine) == 1, f"expected one answer to {request_id}, got {answers}"
    answer = mine[0]
    if "error" in answer:  # only what JSON-RPC itself forbids: text that is not Unicode
        assert answer["error"]["code"] == -32602, answer
        return
    result = answer["result"]
    envelope = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == envelope
    assert result.get("isError", False) == (envelope.get("ok") is not True)
    advertised = server.tools[tool_name]["outputSchema"]
    if envelope.get("ok") is True:
        jsonschema.validate(envelope, advertised)
    else:
        jsonschema.validate(envelope, PATTERN_A)
        if _admits_errors(advertised):
            jsonschema.validate(envelope, advertised)


def _admits_errors(schema: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(SAMPLE_ERROR)


def _call_line(request_id: int, tool_name: str, arguments: Any) -> bytes:
    params = {"name": tool_name, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


@pytest.mark.slow
@pytest.mark.parametrize("tool_name", sorted(tool.name for tool in TOOLS))
def test_every_tool_answers_every_argument_with_an_envelope(server: Server, tool_name: str) -> None:
    @FUZZ
    @given(arguments=_arguments(tool_name))
    def probe(arguments: Any) -> None:
        request_id = server.wire.next_id()
        answers = server.exchange(_call_line(request_id, tool_name, arguments), expect=request_id)
        _check_answer(server, tool_name, answers, request_id)

    probe()


def _messages() -> st.SearchStrategy[Any]:
    # Valid ids stay clear of the small integers the test's own requests use.
    valid_ids = st.one_of(st.integers(min_value=10**9), st.text(max_size=5).map(lambda text: f"r-{text}"))
    invalid_ids = st.one_of(st.none(), st.booleans(), st.floats(), st.lists(st.integers(), max_size=2))
    methods = st.one_of(
        st.sampled_from(["ping", "tools/list", "tools/call", "resources/list", "x"]), _scalars()
    )
    fields = {"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "id": st.one_of(valid_ids, invalid_ids)}
    message = st.fixed_dictionaries({}, optional={**fields, "method": methods, "params": _json()})
    return st.one_of(message, st.lists(message, max_size=2), _json())


@pytest.mark.slow
def test_random_messages_never_silence_or_kill_the_server(server: Server) -> None:
    @FUZZ
    @given(message=_messages())
    def probe(message: Any) -> None:
        request_id = message.get("id") if isinstance(message, dict) else None
        expect = request_id if _answerable(message) else None
        answers = server.exchange(json.dumps(message).encode(), expect=expect)
        for answer in answers:
            assert answer.get("jsonrpc") == "2.0" and ("result" in answer) != ("error" in answer), answer
        if isinstance(message, dict) and "id" in message and "method" in message:
            assert answers, f"no answer to {message}"

    probe()


def _answerable(message: Any) -> bool:
    """A request whose own id the answer will carry (a broken one is answered with id null)."""
    return (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and isinstance(message.get("params", {}), dict | None)
        and (isinstance(message.get("id"), str) or type(message.get("id")) is int)
    )
