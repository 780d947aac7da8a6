"""`"approvals"`: the calls a person decides before they run (SPEC §22).

    "approvals": {"rules": [{"tools": ["shell.*"], "principals": ["*"], "approvers": ["carol",
                  "group:sre"], "mode": "approver"}], "timeout_s": 120, "ttl_s": 900}

A rule holds a `tools/call` whose tool (`server.tool`, as listed) matches one of `tools` (globs)
and whose caller matches one of `principals` (globs over the principal's name, or `group:NAME`
for a member of that IdP group; default every caller). `mode` says who decides: `approver` (one
of `approvers`, principals or `group:NAME`, never the caller) or `ask_user` (the caller's own
user, through an elicitation; `approvers` may then be left out). The first rule that matches a
call is the one that holds it. `timeout_s` is how long a held call waits before it is answered
APPROVAL_PENDING; `ttl_s` how long after the call was held an approval may still be given and
used. Held calls are kept in the audit store, so approvals need an `"audit"` section.

Each key is checked with its JSON path; a glob that matches no tool the config names now is a
warning, not an error (`unmatched_rules`): its server may come later.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from colibri.core.identity import Identity
from colibri.switchboard.base import ConfigError, json_path
from colibri.switchboard.config.callers import GROUP, check_callers

MODES = ("approver", "ask_user")
_RULE_KEYS = ("tools", "principals", "approvers", "mode")
_KEYS = ("rules", "timeout_s", "ttl_s")
TIMEOUT_S = 120.0
TTL_S = 900.0


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: what it holds, and who decides."""

    index: int
    tools: tuple[str, ...]
    principals: tuple[str, ...]
    approvers: tuple[str, ...]
    mode: str

    @property
    def where(self) -> str:
        return f"approvals.rules[{self.index}]"

    def holds(self, tool: str, principal: str, groups: Iterable[str]) -> bool:
        if not any(fnmatch.fnmatchcase(tool, glob) for glob in self.tools):
            return False
        return any(
            name.removeprefix(GROUP) in groups
            if name.startswith(GROUP)
            else fnmatch.fnmatchcase(principal, name)
            for name in self.principals
        )

    def text(self) -> str:
        """The rule as its held calls record it: its JSON path and its keys."""
        rule = {"tools": list(self.tools), "principals": list(self.principals), "mode": self.mode}
        return json.dumps({"rule": self.where, **rule, "approvers": list(self.approvers)}, sort_keys=True)


@dataclass(frozen=True, slots=True)
class Approvals:
    """The `approvals` section as the switchboard runs it."""

    rules: tuple[Rule, ...]
    timeout_s: float = TIMEOUT_S
    ttl_s: float = TTL_S

    def rule_for(self, tool: str, who: str | Identity) -> Rule | None:
        """The first rule that holds a call of `tool` by `who`, or None."""
        principal, groups = (who, ()) if isinstance(who, str) else (who.principal, who.groups or ())
        return next((rule for rule in self.rules if rule.holds(tool, principal, groups)), None)


def approvals(raw: Any, audited: bool) -> Approvals | None:
    """The checked `approvals` section (None: there is none); ConfigError naming the first problem."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError("approvals", f'expected an object with "rules", got {_kind(raw)}')
    _known(raw, _KEYS, "approvals")
    if not audited:
        raise ConfigError(
            "approvals",
            'needs an audit store, where held calls and decisions are kept: add "audit": {"db": "PATH"}',
        )
    rules = raw.get("rules")
    if not isinstance(rules, list) or not rules:
        raise ConfigError("approvals.rules", f"expected a non-empty array of rules, got {_shown(rules)}")
    return Approvals(
        tuple(_rule(index, rule) for index, rule in enumerate(rules)),
        _seconds(raw, "timeout_s", TIMEOUT_S),
        _seconds(raw, "ttl_s", TTL_S),
    )


def unmatched_rules(
    config: Approvals | None, servers: Iterable[str], listed: Mapping[str, Iterable[str]]
) -> list[str]:
    """One warning line per rule glob that matches no tool: no configured server answers its server
    part, or (`listed`: each server's tool names, once known) none of the tools its servers list."""
    if config is None:
        return []
    servers, lines = list(servers), []
    for rule in config.rules:
        for index, glob in enumerate(rule.tools):
            server = glob.partition(".")[0]
            named = [name for name in servers if fnmatch.fnmatchcase(name, server)]
            where = f"{rule.where}.tools[{index}]: {glob!r}"
            if not named:
                lines.append(f"{where} matches no configured server; it holds nothing now")
                continue
            known = [f"{name}.{tool}" for name in named if name in listed for tool in listed[name]]
            if all(name in listed for name in named) and not any(
                fnmatch.fnmatchcase(tool, glob) for tool in known
            ):
                lines.append(
                    f"{where} matches none of the tools {', '.join(named)} list; it holds nothing now"
                )
    return lines


def _rule(index: int, raw: Any) -> Rule:
    where = ("approvals", "rules", index)
    if not isinstance(raw, dict):
        raise ConfigError(
            json_path(where), f'expected an object with "tools" and "approvers", got {_kind(raw)}'
        )
    _known(raw, _RULE_KEYS, json_path(where))
    mode = raw.get("mode", "approver")
    if mode not in MODES:
        raise ConfigError(
            json_path((*where, "mode")),
            'expected "approver" (a person the rule names decides) or "ask_user" (the caller\'s own user '
            f"decides), got {_shown(mode)}",
        )
    tools = _names(raw, where, "tools", required=True)
    principals = _names(raw, where, "principals", required=False) or ("*",)
    check_callers([name for name in principals if name.startswith(GROUP)], _at(where, "principals"))
    approvers = _names(raw, where, "approvers", required=mode == "approver")
    check_callers(approvers, _at(where, "approvers"))
    return Rule(index, tools, principals, approvers, mode)


def _at(where: tuple[Any, ...], key: str) -> tuple[str, ...]:
    # json_path writes the rule's index as [N]; check_callers only hands the section on to it
    return cast(tuple[str, ...], (*where, key))


def _names(raw: dict[str, Any], where: tuple[Any, ...], key: str, *, required: bool) -> tuple[str, ...]:
    value = raw.get(key)
    if value is None and not required:
        return ()
    what = {
        "tools": 'globs over server.tool (e.g. "shell.*")',
        "principals": "principals' names (globs) or group:NAME",
        "approvers": "principals or group:NAME who decide (never the caller itself)",
    }[key]
    if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(
            json_path((*where, key)), f"expected a non-empty array of {what}, got {_shown(value)}"
        )
    return tuple(value)


def _seconds(raw: dict[str, Any], key: str, default: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise ConfigError(f"approvals.{key}", f"expected a number of seconds > 0, got {_shown(value)}")
    return float(value)


def _known(raw: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    for key in raw:
        if key not in keys:
            raise ConfigError(where, f"unknown key {key!r}; expected one of: {', '.join(keys)}")


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null", dict: "an object"}.get(
        type(value), "a number"
    )


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
