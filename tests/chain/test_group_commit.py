"""Group commit (chain/group.py), in process, on both backends: write calls that wait together
share one transaction, each keeps its own outcome, and a batch that cannot commit writes nothing
of any call in it, each refused with `retryable: true`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, StrictStr

from colibri.chain.pipeline import Chain, Reply
from colibri.core.errors import DomainError
from colibri.core.modes import Mode, ToolClass
from colibri.core.spec import Arguments, ErrorPattern, Tool, ToolContext
from colibri.core.state import ServerState
from colibri.storage import Database

pytestmark = pytest.mark.anyio

DEFERRED_CHECK = "deferred_check"


class Note(Arguments):
    title: StrictStr
    fault: str = ""  # "domain", "crash", "duplicate" (found by the server), "deferred" (at COMMIT)


class Saved(BaseModel):
    title: str


def _save(ctx: ToolContext, args: Note) -> Saved:
    db = ctx.database()
    db.execute("INSERT INTO notes (title) VALUES (?)", (args.title,))
    if args.fault == "domain":
        raise DomainError("ERR_REFUSED", f"{args.title} was refused; pass no fault")
    if args.fault == "crash":
        raise ZeroDivisionError("division by zero")
    if args.fault == "duplicate":
        # Nothing is read after it: on PostgreSQL its error surfaces only later (pipelined).
        db.execute("INSERT INTO keys (id) VALUES (1)")
    if args.fault == "deferred":
        db.execute("INSERT INTO deferred_check (parent) VALUES (99)")  # no parent 99: COMMIT refuses
    return Saved(title=args.title)


NOTE = Tool(
    name="note",
    title="Note",
    description="saves a note",
    input_model=Note,
    output_model=Saved,
    handler=_save,
    pattern=ErrorPattern.A,
    tool_class=ToolClass.WRITE,
)


@pytest.fixture
def chain(fresh_db: Database) -> Chain:
    if fresh_db.dialect.name == "postgres":  # each row says which transaction wrote it
        fresh_db.execute("CREATE TABLE notes (title TEXT, tx BIGINT DEFAULT txid_current())")
    else:
        fresh_db.execute("CREATE TABLE notes (title TEXT)")
    fresh_db.execute("CREATE TABLE keys (id INTEGER PRIMARY KEY)")
    fresh_db.execute("INSERT INTO keys (id) VALUES (1)")
    fresh_db.execute("CREATE TABLE parents (id INTEGER PRIMARY KEY)")
    fresh_db.execute(
        f"CREATE TABLE {DEFERRED_CHECK}"
        " (parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)"
    )
    state = ServerState(version="t", declared_mode=Mode.FULL, phase="phase2", mode=Mode.FULL, db=fresh_db)
    return Chain({NOTE.name: NOTE}, state)


def _ok(title: str) -> dict[str, Any]:
    return {"ok": True, "data": {"title": title}}


def _notes(db: Database) -> list[str]:
    return sorted(row[0] for row in db.execute("SELECT title FROM notes"))


def _audited(db: Database) -> dict[str, str]:
    """Outcome of each call by the title in its arguments."""
    rows = db.execute("SELECT arguments, outcome FROM actions WHERE tool = 'note'")
    return {Note.model_validate_json(row[0]).title: row[1] for row in rows}


async def _together(chain: Chain, calls: list[dict[str, Any]]) -> list[Reply]:
    """Run the calls so that all of them wait for the chain's lock at once: one batch."""
    replies: list[Reply | None] = [None] * len(calls)

    async def one(index: int) -> None:
        replies[index] = await chain.run("note", calls[index])

    async with anyio.create_task_group() as tasks, chain.lock:
        for index in range(len(calls)):
            tasks.start_soon(one, index)
        with anyio.fail_after(5):
            while chain.lock.statistics().tasks_waiting < len(calls):
                await anyio.sleep(0.01)
    assert all(reply is not None for reply in replies)
    return [reply for reply in replies if reply is not None]


async def test_calls_that_wait_together_commit_together(chain: Chain, fresh_db: Database) -> None:
    replies = await _together(chain, [{"title": f"n{i}"} for i in range(16)])
    assert [reply.envelope for reply in replies] == [
        {"ok": True, "data": {"title": f"n{i}"}} for i in range(16)
    ]
    assert _notes(fresh_db) == sorted(f"n{i}" for i in range(16))
    assert _audited(fresh_db) == {f"n{i}": "ok" for i in range(16)}
    if fresh_db.dialect.name == "postgres":
        # One transaction id (of the top-level transaction, not its savepoints'): one commit.
        assert fresh_db.execute("SELECT count(DISTINCT tx) FROM notes").fetchone()[0] == 1


async def test_each_call_keeps_its_own_failure(chain: Chain, fresh_db: Database) -> None:
    calls = [
        {"title": "a"},
        {"title": "b", "fault": "domain"},
        {"title": "c"},
        {"title": "d", "fault": "crash"},
    ]
    calls += [{"title": "e", "fault": "duplicate"}, {"title": "f"}]
    replies = {
        call["title"]: reply.envelope
        for call, reply in zip(calls, await _together(chain, calls), strict=True)
    }
    for title in "acf":
        assert replies[title] == {"ok": True, "data": {"title": title}}
    assert replies["b"]["error"]["code"] == "ERR_REFUSED"
    assert replies["b"]["error"]["message"].startswith("b was refused")
    assert replies["d"]["error"]["details"] == {"exception": "ZeroDivisionError"}
    # The server found the duplicate key after the call had moved on (PostgreSQL pipelines its
    # statements): the batch ran again call by call, and the error went to the call that made it.
    assert replies["e"]["error"]["details"]["exception"] == "IntegrityError", replies["e"]
    assert _notes(fresh_db) == ["a", "c", "f"], "a failed call's writes were rolled back, no one else's"
    assert _audited(fresh_db) == {"a": "ok", "b": "error", "c": "ok", "d": "error", "e": "error", "f": "ok"}


async def test_a_call_its_commit_refuses_is_refused_retryably_alone(chain: Chain, fresh_db: Database) -> None:
    calls = [{"title": "a"}, {"title": "b", "fault": "deferred"}, {"title": "c"}]
    replies = [reply.envelope for reply in await _together(chain, calls)]
    assert replies[0] == {"ok": True, "data": {"title": "a"}} and replies[2] == {
        "ok": True,
        "data": {"title": "c"},
    }
    error = replies[1]["error"]
    assert error["code"] == "HANDLER_ERROR" and error["details"] == {"retryable": True}
    assert error["message"].startswith("note was not run:") and "nothing was written" in error["message"]
    assert _notes(fresh_db) == ["a", "c"]
    assert _audited(fresh_db) == {"a": "ok", "c": "ok"}, "never a row for a write that was not committed"


@pytest.fixture
def short_lock_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lock waits of 0.3 s instead of 10, for connections opened from now on."""
    from colibri.storage.postgres import link
    from colibri.storage.sqlite import database

    monkeypatch.setattr(link, "LOCK_TIMEOUT_MS", 300)
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MS", 300)


async def test_a_lock_wait_over_the_timeout_refuses_the_batch_retryably(
    short_lock_wait: None, open_store: Callable[..., Database]
) -> None:
    db, other = open_store(), open_store()
    db.execute("CREATE TABLE notes (title TEXT)")
    state = ServerState(version="t", declared_mode=Mode.FULL, phase="phase2", mode=Mode.FULL, db=db)
    chain = Chain({NOTE.name: NOTE}, state)
    holding = other.atomic()
    holding.__enter__().execute("SELECT count(*) FROM notes").fetchone()  # the store's write lock, held
    try:
        replies = await _together(chain, [{"title": "a"}, {"title": "b"}])
    finally:
        holding.__exit__(None, None, None)
    for reply in replies:
        error = reply.envelope["error"]
        assert error["code"] == "HANDLER_ERROR" and error["details"] == {"retryable": True}
        assert "locked by another connection" in error["message"] and "retry the call" in error["message"]
    assert _notes(db) == [] and _audited(db) == {}
    assert (await chain.run("note", {"title": "later"})).envelope == _ok("later")


async def test_read_calls_run_outside_the_shared_transaction(chain: Chain, fresh_db: Database) -> None:
    """A read never holds the write lock of every replica for its whole length."""
    seen: list[bool] = []

    def peek(ctx: ToolContext, args: Note) -> Saved:
        seen.append(ctx.database().in_transaction)
        return Saved(title=args.title)

    read = Tool(
        name="peek",
        title="Peek",
        description="reads",
        input_model=Note,
        output_model=Saved,
        handler=peek,
        tool_class=ToolClass.READ,
    )
    state = ServerState(version="t", declared_mode=Mode.FULL, phase="phase2", mode=Mode.FULL, db=fresh_db)
    both = Chain({NOTE.name: NOTE, read.name: read}, state)
    async with anyio.create_task_group() as tasks, both.lock:
        for index in range(3):
            tasks.start_soon(both.run, "note", {"title": f"w{index}"})
            tasks.start_soon(both.run, "peek", {"title": f"r{index}"})
        while both.lock.statistics().tasks_waiting < 6:
            await anyio.sleep(0.01)
    assert seen == [False, False, False]
    assert _notes(fresh_db) == ["w0", "w1", "w2"]
