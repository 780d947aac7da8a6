"""The switchboard config reference, read from the pydantic models that check the file
(colibri.switchboard.config.schema.RawFile and the models under it) and the key lists of the
sections checked key by key (auth.oauth, tool_search).

A key's note is the comment its model gives it (`key: type = default  # note`), where there is one.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import types
import typing
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from colibri.switchboard.config import schema

NAME = "NAME"  # a key the file chooses (a server's name, a policy's principal, a tool glob)
_COMMENT = re.compile(r"^\s*(\w+)\s*:.*#\s*(.+)$")

# Sections the schema takes as any JSON, each checked key by key by a module of the config package:
# (module, {path step below the section: the module's tuple of keys there}).
SECTIONS: dict[str, tuple[str, dict[str, str]]] = {
    "auth.oauth": ("oauth", {"": "KEYS"}),
    "tool_search": ("search", {"": "KEYS"}),
    "approvals": ("approvals", {"": "_KEYS", ".rules[]": "_RULE_KEYS"}),
}


# Keys whose value is any JSON by design, not a section: a deep check's arguments to its tool.
FREE = frozenset({f"mcpServers.{NAME}.health.deep.arguments"})


class Unlisted(Exception):
    """A section typed as any JSON that SECTIONS does not say how to read."""


def page() -> str:
    lines = [
        "# Switchboard configuration",
        "",
        "<!-- generated from colibri.switchboard.config by docs/hooks/ref_config.py -->",
        "",
        "Every key of the file `colibri switchboard --config FILE` reads, as its schema checks it.",
        f"`{NAME}` stands for a key you choose (a server's name, a principal, a tool).",
        "An unknown key, a wrong type or a value out of range stops the start with exit 2 and one",
        "line naming its JSON path (a reload is refused the same way). `${VAR}` and",
        "`${VAR:-default}` expand from the environment in `command`, `args`, `env`, `url` and `headers`.",
        "",
        "| key | type | default | note |",
        "|---|---|---|---|",
    ]
    keyed: list[str] = []
    lines += _rows(schema.RawFile, "", keyed)
    for path in keyed:
        if path not in SECTIONS:
            raise Unlisted(
                f"{path} is checked key by key: name its module in docs/hooks/ref_config.py SECTIONS"
            )
        name, steps = SECTIONS[path]
        module = importlib.import_module(f"colibri.switchboard.config.{name}")
        lines += ["", f"## {path}", "", _docstring(module), "", "| key |", "|---|"]
        for step, attribute in steps.items():
            lines += [f"| `{path}{step}.{key}` |" for key in getattr(module, attribute)]
    return "\n".join(lines) + "\n"


def _rows(model: type[BaseModel], prefix: str, keyed: list[str]) -> list[str]:
    notes = _notes(model)
    rows: list[str] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        note = notes.get(name, "")
        if _any_json(field.annotation) and path not in FREE:
            keyed.append(path)
            note = f"{note}; keys: [{path}](#{path.replace('.', '').replace('_', '_')})".lstrip("; ")
        rows.append(f"| `{path}` | {_type(field.annotation, field)} | {_default(field)} | {note} |")
        for inner, suffix in _nested(field.annotation):
            rows += _rows(inner, f"{path}{suffix}.", keyed)
    return rows


def _any_json(annotation: Any) -> bool:
    """A field pydantic takes as any JSON (or any object), for a module to check key by key."""
    parts = _parts(annotation)
    return any(
        part is Any or (typing.get_origin(part) is dict and typing.get_args(part)[1] is Any) for part in parts
    )


def _nested(annotation: Any) -> list[tuple[type[BaseModel], str]]:
    """The models under a field, each with the path step into it (`.NAME` for a mapping)."""
    found: list[tuple[type[BaseModel], str]] = []
    for part in _parts(annotation):
        if isinstance(part, type) and issubclass(part, BaseModel):
            found.append((part, ""))
        elif typing.get_origin(part) is dict:
            value = typing.get_args(part)[1]
            found += [(inner, f".{NAME}" + step) for inner, step in _nested(value)]
    return found


def _parts(annotation: Any) -> list[Any]:
    """The members of a union (without None), each stripped of Annotated."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [part for arg in typing.get_args(annotation) for part in _parts(arg)]
    if typing.get_origin(annotation) is typing.Annotated:
        return _parts(typing.get_args(annotation)[0])
    return [] if annotation is type(None) else [annotation]


def _type(annotation: Any, field: FieldInfo | None = None) -> str:
    shown = " or ".join(_one(part) for part in _parts(annotation)) or "null"
    bounds = _bounds(annotation, field)
    return f"{shown} ({bounds})" if bounds else shown


def _one(part: Any) -> str:
    origin = typing.get_origin(part)
    if origin is Literal:
        return "one of " + ", ".join(f'`"{value}"`' for value in typing.get_args(part))
    if origin is list:
        return f"array of {_type(typing.get_args(part)[0])}"
    if origin is dict:
        return f"object of {NAME} → {_type(typing.get_args(part)[1])}"
    if isinstance(part, type) and issubclass(part, BaseModel):
        return "object"
    names = {str: "string", float: "number", int: "integer", bool: "boolean"}
    if part is Any:
        return "any JSON"
    return names.get(part, getattr(part, "__name__", str(part)))


def _bounds(annotation: Any, field: FieldInfo | None) -> str:
    metadata: list[Any] = list(field.metadata) if field is not None else []
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Annotated:
            metadata += typing.get_args(arg)[1:]
    if typing.get_origin(annotation) is typing.Annotated:
        metadata += typing.get_args(annotation)[1:]
    flat: list[Any] = []
    while metadata:
        item = metadata.pop(0)
        if isinstance(item, FieldInfo):
            metadata += item.metadata
        else:
            flat.append(item)
    said: list[str] = []
    for item in flat:
        for attribute, words in (("gt", "> {}"), ("ge", ">= {}"), ("min_length", "at least {} long")):
            value = getattr(item, attribute, None)
            if value is not None:
                said.append(words.format(value))
        pattern = getattr(item, "pattern", None)
        if isinstance(pattern, str):
            said.append(f"matching `{pattern}`")
    return ", ".join(dict.fromkeys(said))


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    default = field.get_default(call_default_factory=True)
    if default is None or isinstance(default, BaseModel):
        return ""
    return f"`{json.dumps(default)}`"


def _notes(model: type[BaseModel]) -> dict[str, str]:
    """The trailing comment of each field's line in the model's source."""
    notes: dict[str, str] = {}
    for line in inspect.getsource(model).splitlines():
        found = _COMMENT.match(line)
        if found and found.group(1) in model.model_fields:
            notes[found.group(1)] = found.group(2).replace("|", "\\|")
    return notes


def _docstring(module: types.ModuleType) -> str:
    return inspect.getdoc(module) or ""
