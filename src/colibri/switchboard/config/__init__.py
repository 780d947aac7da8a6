"""The config file (SPEC §7, §12): read, expanded, checked, and turned into small frozen objects.

model.py   what the switchboard runs on: `SwitchboardConfig`, `ServerSpec`, `HealthPolicy`, `Target`
load.py    `load(path)` / `parse(text)`: the file to a `SwitchboardConfig`, or a `ConfigError` naming
           the JSON path of the first problem
schema.py  the raw file as pydantic checks it, and its first problem said with a did-you-mean
expand.py  `${VAR}` and `${VAR:-default}` in the fields that start or reach a server; `${PRINCIPAL}`
           of an isolated server, per principal (`for_principal`)
gateway.py the audited gateway's sections (SPEC §15): audit, pins, auth.policies, rate_limits
exchange.py "identity": "exchange" on a server entry, checked against auth.oauth (SPEC §20)
callers.py who a policy or a rate limit names: a principal, or an IdP group `group:NAME` (SPEC §20)
approvals.py the calls a person decides before they run (SPEC §22)
search.py  "tool_search": find_tools and call_tool in place of every tool (SPEC §23)
"""

from colibri.switchboard.config.approvals import Approvals, Rule, unmatched_rules
from colibri.switchboard.config.callers import GROUP
from colibri.switchboard.config.expand import expand, expand_servers, for_principal
from colibri.switchboard.config.gateway import SERVER_METHODS, AuditSpec, Limit, Policy, RateLimits, unmatched
from colibri.switchboard.config.load import load, parse
from colibri.switchboard.config.model import (
    STATUS_TOOL,
    DeepCheck,
    HealthPolicy,
    ServerSpec,
    SwitchboardConfig,
    Target,
)
from colibri.switchboard.config.search import CALL_TOOL, FIND_TOOLS, ToolSearch

__all__ = [
    "CALL_TOOL",
    "FIND_TOOLS",
    "GROUP",
    "SERVER_METHODS",
    "STATUS_TOOL",
    "Approvals",
    "AuditSpec",
    "DeepCheck",
    "HealthPolicy",
    "Limit",
    "Policy",
    "RateLimits",
    "Rule",
    "ServerSpec",
    "SwitchboardConfig",
    "Target",
    "ToolSearch",
    "expand",
    "expand_servers",
    "for_principal",
    "load",
    "parse",
    "unmatched",
    "unmatched_rules",
]
