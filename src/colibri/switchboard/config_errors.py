"""The first problem pydantic found in a config file, said the way an operator fixes it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from colibri.switchboard.errors import ConfigError

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def first_problem(exc: ValidationError, keys: Mapping[str, tuple[str, ...]]) -> ConfigError:
    """The first error of `exc`; `keys` lists the keys each section of the file allows."""
    error = exc.errors(include_url=False)[0]
    loc = tuple(error["loc"])
    kind = error["type"]
    got = error.get("input")
    if kind == "missing":
        return ConfigError(path(loc), "required key is missing")
    if kind == "extra_forbidden":
        allowed = ", ".join(keys[_section(loc[:-1])])
        return ConfigError(path(loc[:-1]), f"unknown key {loc[-1]!r}; expected one of: {allowed}")
    context = error.get("ctx") or {}
    if kind == "greater_than":
        noun = "a number of seconds" if str(loc[-1]).endswith("_s") else "a number"
        expected = f"{noun} > {context['gt']:g}"
    elif kind == "greater_than_equal":
        noun = "a number of seconds" if str(loc[-1]).endswith("_s") else "an integer"
        expected = f"{noun} >= {context['ge']:g}"
    elif kind == "finite_number":
        expected = "a finite number of seconds" if str(loc[-1]).endswith("_s") else "a finite number"
    elif kind == "too_short":
        expected = "a non-empty value"
    elif kind == "string_too_short":
        expected = "a non-empty string"
    elif kind == "string_pattern_mismatch":
        expected = "an http:// or https:// URL"
    elif kind == "literal_error":
        expected = f"one of {context.get('expected', '')}"
    else:
        expected = str(error["msg"]).removeprefix("Input should be ").removeprefix("Value error, ")
    return ConfigError(path(loc), f"expected {expected}, got {_show(got)}")


def _section(loc: tuple[Any, ...]) -> str:
    match loc:
        case ():
            return "file"
        case ("health",):
            return "health"
        case ("mcpServers", _):
            return "server"
        case ("mcpServers", _, "health"):
            return "server_health"
        case ("mcpServers", _, "health", "deep"):
            return "deep"
    return "file"


def path(loc: tuple[Any, ...]) -> str:
    """A JSON path such as `mcpServers.search-a.health.liveness_s` or `fallbacks.search[1]`."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif NAME_PATTERN.match(part):
            path += f".{part}" if path else part
        else:
            path += f"[{json.dumps(part)}]"
    return path or "$"


def _show(value: Any) -> str:
    text = json.dumps(value) if _is_json(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def kind_of(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
