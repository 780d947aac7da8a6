"""What a tool is: a name, an input model, an output model, a handler, its error pattern and its
class (system, read or write), from which the modes that admit it follow.

Domains declare their tools with `Tool(...)` beside their handlers; the chain is the only
caller of a handler. Handlers are plain functions `(ToolContext, InputModel) -> OutputModel`
that raise `DomainError` to refuse; they never see MCP types.

A domain names its models and handler as "package.module:attribute", imported when the tool is
first called: `initialize` and `tools/list` are answered from the tools' declarations and kept
schemas alone (SPEC §18, nothing imported before it is needed), and the domains' handlers and
models were most of what `colibri serve` imported beyond the SDK (35-60 ms of a ~1 s start).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from colibri.core.modes import Mode, ToolClass, admits
from colibri.core.schemas import model_schema

if TYPE_CHECKING:
    from colibri.core.database import Database
    from colibri.core.state import ServerState


class ErrorPattern(StrEnum):
    A = "A"  # domain errors become error envelopes with their own code (isError)
    B = "B"  # domain errors travel inside a success envelope: data = {ok: false, error}


class Model(BaseModel):
    """Base of every tool's models. Their validators are built when first used, not at import:
    tools/list is answered from the kept schemas (tools/snapshot.py), and most sessions call a
    few of the tools, so building all of them at start only delayed the first answer
    (`colibri.runtime.server` imported in 102-124 ms with this, 129-145 ms without)."""

    model_config = ConfigDict(defer_build=True)


class Arguments(Model):
    """Base of every input model: unknown extra fields are ignored, as the seeds specify."""

    model_config = ConfigDict(extra="ignore")


class DomainErrorBody(Model):
    code: str
    message: str
    model_config = ConfigDict(extra="allow")


class DomainErrorData(Model):
    """Pattern B: a handler's refusal, carried inside a success envelope."""

    ok: Literal[False]
    error: DomainErrorBody


class ChainErrorBody(Model):
    code: str = Field(
        description="INVALID_PARAMS, TOOL_NOT_ADMITTED, UNKNOWN_TOOL, HANDLER_ERROR, or the domain's own "
        "refusal (SESSION_NOT_FOUND, SESSION_FINALIZED, TASK_NOT_FOUND); a gateway in front of Colibri may "
        "add its own, such as SERVICE_UNAVAILABLE."
    )
    message: str = Field(description="What was wrong and what would be right.")
    details: dict[str, Any] = Field(description="Facts about the problem, e.g. issues for INVALID_PARAMS.")


class ChainErrorEnvelope(Model):
    """Pattern A: the chain refused or the handler raised; the result has isError true."""

    ok: Literal[False]
    error: ChainErrorBody


@dataclass(slots=True)
class ToolContext:
    """What a handler may use: the database (None only before phase 2), the server state, and the
    principal the server proved for this call (the token's name over HTTP, `local` on stdio)."""

    server: ServerState
    db: Database | None = None
    principal: str = "local"

    def database(self) -> Database:
        if self.db is None:  # admission keeps domain tools out until phase 2; this is a guard
            raise RuntimeError("the database is not open (the server is still booting or failed to boot)")
        return self.db


Handler = Callable[[ToolContext, Any], BaseModel]


_REFERENCE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def _loaded(given: Any) -> Any:
    """`given` itself, or the object a "package.module:attribute" reference names (its module
    imported now)."""
    if not isinstance(given, str):
        return given
    module, _, attribute = given.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class Tool:
    """One tool. `destructive` and `idempotent` describe a writing tool's effect (MCP annotations);
    a reading tool is neither destructive nor anything but idempotent. The models and the handler
    are given as themselves or as "package.module:attribute" references, loaded on first use
    (`arguments_model`, `result_model`, `handle`)."""

    name: str
    title: str
    description: str
    input_model: type[BaseModel] | str
    output_model: type[BaseModel] | str
    handler: Handler | str
    pattern: ErrorPattern = ErrorPattern.A
    destructive: bool = False
    idempotent: bool = False
    tool_class: ToolClass = field(kw_only=True)
    # Bounded work once the write lock is held (no scan of a whole table or the file system): such
    # a call runs on the event loop when the lock is free, sparing the worker thread's two hops.
    quick: bool = field(default=False, kw_only=True)
    # A reading tool that writes when this boolean argument is true (task_next_actions' claim): such
    # a call is admitted, refused and run as a write tool's would be (`writes_for`).
    writes_when: str | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not self.writes and (self.destructive or self.idempotent):
            raise ValueError(
                f"tool {self.name!r} only reads: destructive and idempotent describe writing tools"
            )
        for given in (self.input_model, self.output_model, self.handler):
            if isinstance(given, str) and not _REFERENCE.fullmatch(given):
                raise ValueError(
                    f"tool {self.name!r}: {given!r} is not a reference like 'package.module:attribute'"
                )

    @cached_property
    def arguments_model(self) -> type[BaseModel]:
        model: type[BaseModel] = _loaded(self.input_model)
        return model

    @cached_property
    def result_model(self) -> type[BaseModel]:
        model: type[BaseModel] = _loaded(self.output_model)
        return model

    @cached_property
    def handle(self) -> Handler:
        handler: Handler = _loaded(self.handler)
        return handler

    @property
    def writes(self) -> bool:
        return self.tool_class is ToolClass.WRITE

    def writes_for(self, raw_arguments: object) -> bool:
        """Whether a call with these (not yet validated) arguments writes."""
        if self.writes or self.writes_when is None:
            return self.writes
        return isinstance(raw_arguments, dict) and raw_arguments.get(self.writes_when) is True

    def admitted_in(self, mode: Mode) -> bool:
        return admits(mode, self.tool_class)

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema, as tools/list sends it (made on first use, or adopted)."""
        return self.made_input_schema()

    @property
    def idempotent_effect(self) -> bool:
        """Whether repeating a call with the same arguments changes nothing more (reads never do)."""
        return self.idempotent or not self.writes

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        """The result's JSON Schema, as tools/list sends it (made on first use, or adopted)."""
        return self.made_output_schema()

    def adopt_schemas(self, input_schema: dict[str, Any], output_schema: dict[str, Any]) -> None:
        """Serve schemas made earlier from these same models (colibri.tools.snapshot) instead of
        making them again: pydantic's schema generation is most of a cold start's own work."""
        self.__dict__["input_schema"] = input_schema  # where cached_property keeps its value
        self.__dict__["output_schema"] = output_schema

    def made_input_schema(self) -> dict[str, Any]:
        return model_schema(self.arguments_model)

    def made_output_schema(self) -> dict[str, Any]:
        """Every envelope `structuredContent` can hold: success (for Pattern B, a result or a refusal)
        or the Pattern A error. Clients check it even on errors, so both must be admitted; the root
        stays an object schema, as MCP requires of an output schema."""
        result = self.result_model
        data: Any = result
        if self.pattern is ErrorPattern.B:
            data = result | DomainErrorData
        success = create_model(
            f"{result.__name__}Envelope",
            __doc__=f"Success: data is the {self.name} result"
            + (", or a domain refusal {ok: false, error}." if self.pattern is ErrorPattern.B else "."),
            ok=(Literal[True], ...),
            data=(data, ...),
        )
        return {"type": "object", "anyOf": [model_schema(success), model_schema(ChainErrorEnvelope)]}
