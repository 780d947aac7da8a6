"""The config file as pydantic checks it, and its first problem as a message naming the JSON path.

`load.py` turns a valid `RawFile` into the frozen objects the switchboard runs on.
"""

from __future__ import annotations

import difflib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from colibri.switchboard.base import ConfigError, json_path
from colibri.switchboard.config.gateway import KEYS as GATEWAY_KEYS
from colibri.switchboard.config.gateway import PinMode, RawAudit, RawPolicy, RawRateLimits

# Finite: `Infinity` (which JSON parsers accept) as a timeout would let a call hang forever.
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
_path = json_path

# --- the raw file, as pydantic checks it ------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _Health(_Strict):
    liveness_s: Seconds | None = None
    readiness_s: Seconds | None = None
    deep_s: Seconds | None = None
    failures_to_quarantine: Annotated[int, Field(ge=1)] | None = None
    cooldown_s: Seconds | None = None
    cooldown_max_s: Seconds | None = None
    call_timeout_s: Seconds | None = None
    check_timeout_s: Seconds | None = None
    restart_backoff_s: Seconds | None = None
    restart_backoff_max_s: Seconds | None = None


class _Deep(_Strict):
    tool: Annotated[str, Field(min_length=1)]
    arguments: dict[str, Any] = {}


class _ServerHealth(_Health):
    deep: _Deep | None = None


class _Tools(_Strict):
    allow: list[Annotated[str, Field(min_length=1)]] | None = None
    deny: list[Annotated[str, Field(min_length=1)]] | None = None


class RawServer(_Strict):
    type: Literal["stdio", "http", "streamable-http", "sse"] | None = None
    command: Annotated[str, Field(min_length=1)] | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    envFile: Annotated[str, Field(min_length=1)] | None = None  # dotenv, relative to the config file
    cwd: str | None = None
    url: Annotated[str, Field(pattern=r"^https?://")] | None = None
    headers: dict[str, str] = {}
    disabled: bool = False
    timeout: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    health: _ServerHealth = _ServerHealth()
    idempotent: list[str] = []
    tools: _Tools | None = None
    tool_timeouts: dict[str, Seconds] = {}
    isolate: Literal["principal"] | None = None  # SPEC §21: a process per principal
    idle_s: Seconds | None = None
    identity: Literal["exchange"] | None = None  # SPEC §20: the caller's token exchanged for this server
    # Read by clients (Claude Desktop, Cline, ...), not by a gateway: accepted so their files load.
    autoApprove: list[str] = []
    alwaysAllow: list[str] = []
    description: str | None = None


class _Auth(_Strict):
    tokens_file: Annotated[str, Field(min_length=1)] | None = None
    oauth: dict[str, Any] | None = None  # SPEC §20, checked key by key in oauth.py
    policies: dict[str, RawPolicy] = {}  # SPEC §15 (gateway.py)


class RawFile(_Strict):
    mcpServers: Annotated[dict[str, RawServer], Field(min_length=1)]
    fallbacks: dict[str, Annotated[list[str], Field(min_length=1)]] = {}
    health: _Health = _Health()
    auth: _Auth | None = None
    startup_wait_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    # The audited gateway (SPEC §15, gateway.py)
    audit: RawAudit | None = None
    pins: PinMode | None = None
    rate_limits: RawRateLimits | None = None
    identity_key: Annotated[str, Field(min_length=1)] | None = None  # SPEC §20 (load.py)
    approvals: Any = None  # SPEC §22, checked key by key in approvals.py
    tool_search: Any = None  # SPEC §23, checked key by key in search.py


_KEYS: dict[str, tuple[str, ...]] = {
    "file": tuple(RawFile.model_fields),
    "server": tuple(RawServer.model_fields),
    "server_health": tuple(_ServerHealth.model_fields),
    "health": tuple(_Health.model_fields),
    "deep": tuple(_Deep.model_fields),
    "tools": tuple(_Tools.model_fields),
    "auth": tuple(_Auth.model_fields),
    **GATEWAY_KEYS,
}


# --- messages ----------------------------------------------------------------------------------------


def first_problem(exc: ValidationError) -> ConfigError:
    error = exc.errors(include_url=False)[0]
    loc = tuple(error["loc"])
    kind = error["type"]
    got = error.get("input")
    if kind == "missing":
        return ConfigError(_path(loc), "required key is missing")
    if kind == "extra_forbidden":
        keys = _KEYS[_section(loc[:-1])]
        close = difflib.get_close_matches(str(loc[-1]), keys, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return ConfigError(
            _path(loc[:-1]), f"unknown key {loc[-1]!r}; {hint}expected one of: {', '.join(keys)}"
        )
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
    return ConfigError(_path(loc), f"expected {expected}, got {_show(got)}")


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
        case ("mcpServers", _, "tools"):
            return "tools"
        case ("auth",):
            return "auth"
        case ("auth", "policies", _):
            return "policy"
        case ("audit",):
            return "audit"
        case ("rate_limits",):
            return "rate_limits"
        case ("rate_limits", "per_token") | ("rate_limits", "per_tool" | "per_principal", _):
            return "limit"
    return "file"


_path = json_path


def _show(value: Any) -> str:
    text = json.dumps(value) if _is_json(value) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
