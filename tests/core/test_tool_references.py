"""A tool names its models and handler as "package.module:attribute", loaded on first use."""

from __future__ import annotations

import inspect
import re
from typing import get_type_hints

import pytest
from pydantic import BaseModel

from colibri.core.modes import ToolClass
from colibri.core.spec import Handler, Tool
from colibri.domains.system.models import NoArguments, Ping
from colibri.tools.catalog import TOOLS


def test_every_catalogue_tool_names_a_handler_of_its_own_models() -> None:
    for tool in TOOLS:
        assert issubclass(tool.arguments_model, BaseModel), tool.name
        assert issubclass(tool.result_model, BaseModel), tool.name
        _context, arguments = inspect.signature(tool.handle).parameters
        hints = get_type_hints(tool.handle)
        assert hints[arguments] is tool.arguments_model, tool.name
        assert hints["return"] is tool.result_model, tool.name


SYSTEM = "colibri.domains.system"


def _tool(
    input_model: type[BaseModel] | str = f"{SYSTEM}.models:NoArguments",
    output_model: type[BaseModel] | str = f"{SYSTEM}.models:Ping",
    handler: Handler | str = f"{SYSTEM}.handlers:ping",
) -> Tool:
    return Tool(
        name="t",
        title="T",
        description="d",
        input_model=input_model,
        output_model=output_model,
        handler=handler,
        tool_class=ToolClass.SYSTEM,
    )


def test_a_reference_loads_what_it_names_and_an_object_is_used_as_given() -> None:
    def handler(ctx: object, args: object) -> Ping:
        raise NotImplementedError

    named, given = _tool(), _tool(NoArguments, Ping, handler)
    assert named.arguments_model is NoArguments and named.result_model is Ping
    assert named.handle.__name__ == "ping" and named.handle.__module__ == f"{SYSTEM}.handlers"
    assert given.arguments_model is NoArguments and given.handle is handler
    assert named.input_schema == given.input_schema and named.output_schema == given.output_schema


MALFORMED = [f"{SYSTEM}.models.Ping", "Ping", ":Ping", "a.b:", "a b:c"]


@pytest.mark.parametrize("reference", MALFORMED)
def test_a_malformed_reference_is_refused_when_the_tool_is_declared(reference: str) -> None:
    with pytest.raises(ValueError, match=re.escape("is not a reference like 'package.module:attribute'")):
        _tool(input_model=reference)


def test_a_reference_to_nothing_fails_on_first_use_saying_what_is_missing() -> None:
    tool = _tool(f"{SYSTEM}.models:NoSuchModel", "colibri.no_such_module:Ping")
    with pytest.raises(AttributeError, match="NoSuchModel"):
        tool.arguments_model  # noqa: B018
    with pytest.raises(ModuleNotFoundError, match=re.escape("colibri.no_such_module")):
        tool.result_model  # noqa: B018
