"""Every envelope a tool can return validates against the output schema that tool advertises.

Clients built on the TypeScript SDK check `structuredContent` against the output schema even when
`isError` is true and discard an answer that does not match (SPEC §1.6). So for random valid and
invalid arguments of every tool, through the real chain on a real database, the envelope must
satisfy the schema, checked by a JSON Schema validator (not by our own models).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from colibri.core.modes import Mode
from colibri.core.spec import Tool
from colibri.runtime.app import App
from colibri.runtime.config import Config
from colibri.tools.catalog import TOOLS

TOOL_NAMES = [tool.name for tool in TOOLS]
BY_NAME = {tool.name: tool for tool in TOOLS}
KNOWN_IDS = {
    "task_id": ["T-1", "T-2", "T-3", "T-999"],
    "session_id": ["s-open", "s-sealed", "s-unknown"],
    "record_id": ["rec_000000000000000000000000"],
}
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values that satisfy one property's JSON Schema (the subset pydantic emits for our models)."""
    if "anyOf" in schema:
        return st.one_of([from_schema(option) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    kind = schema.get("type")
    if kind == "string":
        if "pattern" in schema:
            # Patterns here are anchored; keep within the length bounds too.
            limit = schema.get("maxLength", 64)
            return st.from_regex(re.compile(schema["pattern"]), fullmatch=True).filter(
                lambda text: schema.get("minLength", 0) <= len(text) <= limit
            )
        return st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 40), 40))
    if kind == "integer":
        low = schema.get("minimum", -(2**31))
        return st.integers(min_value=low, max_value=min(schema.get("maximum", 2**31), low + 10_000))
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {})), min_size=schema.get("minItems", 0), max_size=4)
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    return JSON


def valid_arguments(tool: Tool) -> st.SearchStrategy[dict[str, Any]]:
    schema = tool.input_schema
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))

    def field(name: str, spec: dict[str, Any]) -> st.SearchStrategy[Any]:
        generic = from_schema(spec)
        if name in KNOWN_IDS:  # mostly ids that exist, so the handlers get past "not found"
            return st.one_of(st.sampled_from(KNOWN_IDS[name]), generic)
        return generic

    return st.fixed_dictionaries(
        {name: field(name, spec) for name, spec in properties.items() if name in required},
        optional={name: field(name, spec) for name, spec in properties.items() if name not in required},
    )


def invalid_arguments(tool: Tool) -> st.SearchStrategy[Any]:
    keys = [*tool.input_schema.get("properties", {}), "unexpected"]
    return st.one_of(
        JSON.filter(lambda value: not isinstance(value, dict)),
        st.dictionaries(st.sampled_from(keys), JSON, max_size=4),
    )


def validator(tool: Tool) -> Draft202012Validator:
    schema = tool.output_schema
    validator_class = validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)  # type: ignore[no-any-return]


VALIDATORS = {tool.name: validator(tool) for tool in TOOLS}


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    with start_blocking_portal() as running:
        yield running


def _app(portal: BlockingPortal, root: Path, mode: Mode) -> App:
    app = App(Config(mode=mode, db_path=root / "colibri.db", skills_dirs=(root / "skills",)))
    portal.call(app.boot)
    return app


@pytest.fixture(scope="module")
def full_app(portal: BlockingPortal, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    root = tmp_path_factory.mktemp("schemas")
    skill = root / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill for the tests.\n---\nBody\n")
    app = _app(portal, root, Mode.FULL)
    seed = [
        ("task_create", {"title": "first"}),
        ("task_create", {"title": "second", "depends_on": ["T-1"]}),
        ("task_create", {"title": "third", "tags": ["x"]}),
        ("audit_session_start", {"session_id": "s-open"}),
        ("audit_session_start", {"session_id": "s-sealed"}),
        ("thought_record", {"session_id": "s-sealed", "kind": "plan", "content": "c", "task_id": "T-1"}),
        ("thought_record", {"session_id": "s-open", "kind": "writeback", "content": "c", "task_id": "T-3"}),
        ("merkle_finalize", {"session_id": "s-sealed"}),
    ]
    for name, arguments in seed:
        reply = portal.call(app.call, name, arguments)
        assert reply.envelope["ok"] is True and reply.envelope["data"].get("ok") is not False, reply.envelope
    yield app
    app.close()


@pytest.fixture(scope="module")
def minimal_app(portal: BlockingPortal, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    app = _app(portal, tmp_path_factory.mktemp("minimal"), Mode.MINIMAL)
    yield app
    app.close()


def _check(portal: BlockingPortal, app: App, name: str, arguments: Any) -> dict[str, Any]:
    reply = portal.call(app.call, name, arguments)
    errors = sorted(VALIDATORS[name].iter_errors(reply.envelope), key=str)
    assert not errors, f"{name}({arguments!r}) -> {reply.envelope!r}: {errors[0].message}"
    return reply.envelope


SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.mark.parametrize("name", TOOL_NAMES)
@SETTINGS
@given(data=st.data())
def test_envelopes_for_valid_arguments_fit_the_output_schema(
    portal: BlockingPortal, full_app: App, name: str, data: st.DataObject
) -> None:
    _check(portal, full_app, name, data.draw(valid_arguments(BY_NAME[name])))


@pytest.mark.parametrize("name", TOOL_NAMES)
@SETTINGS
@given(data=st.data())
def test_envelopes_for_invalid_arguments_fit_the_output_schema(
    portal: BlockingPortal, full_app: App, name: str, data: st.DataObject
) -> None:
    _check(portal, full_app, name, data.draw(invalid_arguments(BY_NAME[name])))


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_refusals_of_the_mode_fit_the_output_schema(
    portal: BlockingPortal, minimal_app: App, name: str
) -> None:
    envelope = _check(portal, minimal_app, name, {})
    if name not in ("server_ping", "server_health"):
        assert envelope["error"]["code"] == "TOOL_NOT_ADMITTED"


def test_every_kind_of_envelope_was_seen(portal: BlockingPortal, full_app: App) -> None:
    """The schemas are not vacuous: success, Pattern A and Pattern B all occur and all validate."""
    success = _check(portal, full_app, "task_get", {"task_id": "T-1"})
    refusal = _check(portal, full_app, "task_get", {"task_id": "T-999"})
    invalid = _check(portal, full_app, "task_create", {"title": 42})
    sealed = _check(
        portal, full_app, "thought_record", {"session_id": "s-sealed", "kind": "plan", "content": "x"}
    )
    assert success["data"]["id"] == "T-1"
    assert refusal["data"]["error"]["code"] == "ERR_NOT_FOUND"
    assert invalid["error"]["code"] == "INVALID_PARAMS"
    assert sealed["error"]["code"] == "SESSION_FINALIZED"  # a Pattern A domain refusal, admitted too
    # And a wrong envelope is rejected, so the validation above can fail.
    assert not VALIDATORS["task_get"].is_valid({"ok": True, "data": {"id": "T-1"}})
    assert not VALIDATORS["task_get"].is_valid({"ok": False, "error": {"message": "no code"}})


def _untyped(schema: Any, path: str) -> Iterator[str]:
    """Paths of value schemas that constrain nothing (no type, const, enum or combinator)."""
    if not isinstance(schema, dict):
        return
    if not ({"type", "const", "enum", "anyOf", "oneOf", "allOf", "$ref"} & schema.keys()):
        yield path
    for key in ("anyOf", "oneOf", "allOf"):
        for index, option in enumerate(schema.get(key, [])):
            yield from _untyped(option, f"{path}.{key}[{index}]")
    for name, option in schema.get("properties", {}).items():
        yield from _untyped(option, f"{path}.properties.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from _untyped(schema[key], f"{path}.{key}")


@pytest.mark.parametrize("name", TOOL_NAMES)
def test_every_field_schema_has_a_real_type(name: str) -> None:
    tool = BY_NAME[name]
    assert list(_untyped(tool.input_schema, "inputSchema")) == []
    assert list(_untyped(tool.output_schema, "outputSchema")) == []
