"""The chain in process: order of stages, validation issues, envelopes, transactions, audit rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field, StrictStr

from colibri.chain.audit_enter import AuditEnter
from colibri.chain.audit_exit import AuditExit
from colibri.chain.dispatch import Dispatch
from colibri.chain.pipeline import STAGES, Chain
from colibri.chain.tool_lock import ToolLock
from colibri.chain.validate import SchemaValidate
from colibri.core.errors import DomainError, StorageError
from colibri.core.modes import Mode, ToolClass
from colibri.core.spec import Arguments, ErrorPattern, Tool, ToolContext
from colibri.core.state import ServerState
from colibri.storage import Database, SQLiteDatabase

pytestmark = pytest.mark.anyio


class Note(Arguments):
    title: StrictStr = Field(min_length=1, max_length=5)
    count: int = 1


class Saved(BaseModel):
    title: str


def _save(ctx: ToolContext, args: Note) -> Saved:
    db = ctx.database()
    db.execute("INSERT INTO notes (title) VALUES (?)", (args.title,))
    if args.count < 0:
        raise DomainError("ERR_NEGATIVE", f"count {args.count} is negative; pass 0 or more")
    if args.count == 0:
        raise ZeroDivisionError("division by zero")
    return Saved(title=args.title)


def _tool(name: str, pattern: ErrorPattern, tool_class: ToolClass = ToolClass.WRITE) -> Tool:
    return Tool(
        name=name,
        title="Test",
        description="test",
        input_model=Note,
        output_model=Saved,
        handler=_save,
        pattern=pattern,
        tool_class=tool_class,
    )


@pytest.fixture
def chain(fresh_db: Database) -> Chain:
    fresh_db.execute("CREATE TABLE notes (title TEXT)")
    state = ServerState(version="t", declared_mode=Mode.FULL, phase="phase2", mode=Mode.FULL, db=fresh_db)
    tools = [_tool("note_b", ErrorPattern.B), _tool("note_a", ErrorPattern.A)]
    return Chain({tool.name: tool for tool in tools}, state)


def _notes(db: Database) -> list[str]:
    return [row[0] for row in db.execute("SELECT title FROM notes")]


def _outcomes(db: Database) -> list[tuple[str, str]]:
    return [
        (r["tool"], r["outcome"])
        for r in db.execute("SELECT tool, outcome FROM actions ORDER BY sequence_no")
    ]


def test_the_stages_run_in_the_specified_order() -> None:
    assert (ToolLock, SchemaValidate, AuditEnter, Dispatch, AuditExit) == STAGES


async def test_success_is_committed_and_audited(chain: Chain, fresh_db: Database) -> None:
    reply = await chain.run("note_b", {"title": "hello", "unknown": "ignored"})
    assert reply.envelope == {"ok": True, "data": {"title": "hello"}}
    assert not reply.is_error
    assert _notes(fresh_db) == ["hello"]
    assert _outcomes(fresh_db) == [("note_b", "ok")]


async def test_validation_issues_name_path_message_and_type(chain: Chain, fresh_db: Database) -> None:
    reply = await chain.run("note_b", {"title": 5, "count": "many"})
    error = reply.envelope["error"]
    assert error["code"] == "INVALID_PARAMS"
    issues = {issue["path"]: issue for issue in error["details"]["issues"]}
    assert issues["title"]["type"] == "string_type"
    assert issues["count"]["type"] == "int_parsing"
    assert "title" in error["message"] and "count" in error["message"]
    assert _outcomes(fresh_db) == [], "invalid calls are refused before audit-enter"


async def test_missing_and_oversized_fields(chain: Chain) -> None:
    missing = (await chain.run("note_b", {})).envelope["error"]
    assert missing["details"]["issues"] == [{"path": "title", "message": "Field required", "type": "missing"}]
    huge = (await chain.run("note_b", {"title": "x" * 100_000})).envelope["error"]
    assert huge["details"]["issues"][0]["type"] == "string_too_long"


async def test_pattern_b_domain_error_rolls_back_inside_a_success_envelope(
    chain: Chain, fresh_db: Database
) -> None:
    reply = await chain.run("note_b", {"title": "neg", "count": -1})
    assert reply.envelope == {
        "ok": True,
        "data": {
            "ok": False,
            "error": {"code": "ERR_NEGATIVE", "message": "count -1 is negative; pass 0 or more"},
        },
    }
    assert _notes(fresh_db) == [], "the handler's write was rolled back"
    assert _outcomes(fresh_db) == [("note_b", "error")]


async def test_pattern_a_domain_error_carries_its_own_code(chain: Chain) -> None:
    """A Pattern A tool's refusal is the envelope's code, as a Pattern B tool's is inside its data:
    not HANDLER_ERROR with the code folded into the message."""
    reply = await chain.run("note_a", {"title": "neg", "count": -1})
    assert reply.is_error
    assert reply.envelope["error"] == {
        "code": "ERR_NEGATIVE",
        "message": "count -1 is negative; pass 0 or more",
        "details": {},
    }


async def test_a_raising_handler_is_reported_audited_and_rolled_back(
    chain: Chain, fresh_db: Database
) -> None:
    reply = await chain.run("note_b", {"title": "boom", "count": 0})
    assert reply.envelope["error"] == {
        "code": "HANDLER_ERROR",
        "message": "division by zero",
        "details": {"exception": "ZeroDivisionError"},
    }
    assert _notes(fresh_db) == []
    assert _outcomes(fresh_db) == [("note_b", "error")]


async def test_not_admitted_is_refused_before_validation_and_recorded_as_denied(fresh_db: Database) -> None:
    state = ServerState(version="t", declared_mode=Mode.FULL, phase="phase2", mode=Mode.FULL, db=fresh_db)
    tools = [_tool("note_b", ErrorPattern.B), _tool("note_ping", ErrorPattern.A, ToolClass.SYSTEM)]
    chain = Chain({tool.name: tool for tool in tools}, state)
    state.mode = Mode.MINIMAL  # as if the effective mode admitted only the system tools
    reply = await chain.run("note_b", "not even an object")
    assert reply.envelope["error"]["code"] == "TOOL_NOT_ADMITTED"
    assert "MINIMAL" in reply.envelope["error"]["message"]
    assert reply.envelope["error"]["message"].endswith("admitted now: note_ping")
    state.mode = Mode.FULL
    assert _outcomes(fresh_db) == [], "MINIMAL writes nothing, not even denials"


async def test_denied_rows_are_written_where_writes_are_allowed(fresh_db: Database) -> None:
    from colibri.storage.audit_log import AuditLog

    state = ServerState(version="t", declared_mode=Mode.TEST, phase="phase2", mode=Mode.TEST, db=fresh_db)
    audit = AuditLog(state)
    audit.denied("c0ffee", "note_b", "local")
    audit.flush_later()  # decided outside the lock, written under it
    rows = list(fresh_db.execute("SELECT tool, outcome, duration_ms FROM actions"))
    assert [tuple(row) for row in rows] == [("note_b", "denied", 0)]


async def test_unknown_tool(chain: Chain) -> None:
    reply = await chain.run("nope", {})
    assert reply.envelope["error"]["code"] == "UNKNOWN_TOOL"


def _peek(ctx: ToolContext, args: Note) -> Saved:
    return Saved(title=args.title)


@pytest.mark.sqlite_only  # the fault is a SQLite trigger
async def test_a_broken_audit_sink_changes_nothing_in_a_read_reply(fresh_db: Database) -> None:
    state = ServerState(version="t", declared_mode=Mode.FULL, phase="phase2", mode=Mode.FULL, db=fresh_db)
    read = Tool(
        name="note_read",
        title="Test",
        description="t",
        input_model=Note,
        output_model=Saved,
        handler=_peek,
        tool_class=ToolClass.READ,
    )
    chain = Chain({"note_read": read}, state)
    expected = (await chain.run("note_read", {"title": "a"})).envelope
    for event in ("INSERT", "UPDATE"):
        fresh_db.execute(
            f"CREATE TRIGGER down BEFORE {event} ON actions BEGIN SELECT RAISE(ABORT, 'down'); END"
        )
        assert (await chain.run("note_read", {"title": "a"})).envelope == expected
        fresh_db.execute("DROP TRIGGER down")


@pytest.mark.sqlite_only  # the fault is a SQLite trigger
async def test_a_write_is_refused_when_its_audit_row_cannot_be_written(
    chain: Chain, fresh_db: Database
) -> None:
    fresh_db.execute("CREATE TRIGGER down BEFORE INSERT ON actions BEGIN SELECT RAISE(ABORT, 'down'); END")
    reply = await chain.run("note_b", {"title": "a"})
    error = reply.envelope["error"]
    assert error["code"] == "HANDLER_ERROR" and error["details"] == {"retryable": True}
    assert "nothing was written" in error["message"] and "retry" in error["message"]
    assert reply.text == json.dumps(reply.envelope, sort_keys=True, separators=(",", ":"))
    assert _notes(fresh_db) == [], "never a write without its audit row"
    fresh_db.execute("DROP TRIGGER down")


@pytest.mark.sqlite_only  # the fault is a SQLite trigger
async def test_a_failed_audit_exit_keeps_the_write_and_its_row(chain: Chain, fresh_db: Database) -> None:
    expected = (await chain.run("note_b", {"title": "a"})).envelope
    fresh_db.execute("CREATE TRIGGER down BEFORE UPDATE ON actions BEGIN SELECT RAISE(ABORT, 'down'); END")
    assert (await chain.run("note_b", {"title": "a"})).envelope == expected
    assert _notes(fresh_db) == ["a", "a"]
    assert _outcomes(fresh_db) == [("note_b", "ok"), ("note_b", "running")]


@pytest.mark.sqlite_only  # the fault is a SQLite trigger
async def test_a_write_and_its_ok_outcome_commit_together(chain: Chain, fresh_db: Database) -> None:
    # Make the audit-exit UPDATE fail for real (not a sink error): the handler's write goes with it.
    fresh_db.execute(
        "CREATE TRIGGER guard AFTER UPDATE ON actions BEGIN SELECT RAISE(ROLLBACK, 'power cut'); END"
    )
    reply = await chain.run("note_b", {"title": "lost"})
    assert reply.envelope["error"]["code"] == "HANDLER_ERROR", (
        "the client must not be told a lost write succeeded"
    )
    assert _notes(fresh_db) == []
    assert _outcomes(fresh_db) == [], "the row went with the write: neither was committed"
    fresh_db.execute("DROP TRIGGER guard")
    assert not (await chain.run("note_b", {"title": "next"})).is_error, "the next transaction begins"


async def test_the_reply_text_is_the_compact_sorted_envelope(chain: Chain) -> None:
    reply = await chain.run("note_b", {"title": "é"})
    assert reply.text == '{"data":{"title":"é"},"ok":true}'


def test_sqlite_errors_inside_handlers_become_storage_errors(tmp_path: Path) -> None:
    db = SQLiteDatabase.open(tmp_path / "x.db")
    try:
        with pytest.raises(StorageError, match="no such table"), db.atomic():
            db.execute("INSERT INTO missing VALUES (1)")
    finally:
        db.close()


def test_a_tools_class_alone_decides_the_modes_that_admit_it() -> None:
    admitted = {
        tool_class: [mode for mode in Mode if _tool("any_name", ErrorPattern.A, tool_class).admitted_in(mode)]
        for tool_class in ToolClass
    }
    assert admitted == {
        ToolClass.SYSTEM: [Mode.FULL, Mode.READONLY, Mode.TEST, Mode.MINIMAL],
        ToolClass.READ: [Mode.FULL, Mode.READONLY, Mode.TEST],
        ToolClass.WRITE: [Mode.FULL, Mode.TEST],
    }


def test_pattern_b_output_schema_admits_the_domain_error() -> None:
    schema: dict[str, Any] = _tool("note_b", ErrorPattern.B).output_schema
    success, failure = schema["anyOf"]
    variants = [set(variant["properties"]) for variant in success["properties"]["data"]["anyOf"]]
    assert variants == [{"title"}, {"ok", "error"}]
    assert failure["properties"]["ok"]["const"] is False
    assert "$defs" not in str(schema)


def test_pattern_a_output_schema_is_the_success_or_the_chain_error() -> None:
    schema: dict[str, Any] = _tool("note_a", ErrorPattern.A).output_schema
    assert schema["type"] == "object"
    success, failure = schema["anyOf"]
    assert set(success["properties"]["data"]["properties"]) == {"title"}
    assert success["required"] == ["ok", "data"]
    assert failure["required"] == ["ok", "error"]
    assert failure["properties"]["error"]["required"] == ["code", "message", "details"]


async def test_a_result_holding_a_lone_surrogate_is_escaped_sent_and_audited(fresh_db: Database) -> None:
    """A file name that is not UTF-8 reaches Python as a lone surrogate; it must not break the reply."""

    def odd(ctx: ToolContext, args: Note) -> Saved:
        return Saved(title="bad\udcff")

    state = ServerState(version="t", declared_mode=Mode.FULL, phase="phase2", mode=Mode.FULL, db=fresh_db)
    tool = Tool(
        name="note_read",
        title="Test",
        description="t",
        input_model=Note,
        output_model=Saved,
        handler=odd,
        tool_class=ToolClass.READ,
    )
    reply = await Chain({"note_read": tool}, state).run("note_read", {"title": "a"})
    assert reply.envelope == {"ok": True, "data": {"title": "bad\\xff"}}
    assert reply.text.encode() == b'{"data":{"title":"bad\\\\xff"},"ok":true}'
    assert _outcomes(fresh_db) == [("note_read", "ok")]
