"""The error reference, read from where each code is defined:

- the chain's Pattern A codes: the ChainError classes of colibri.chain.errors (code and docstring);
- the domains' refusals: every `DomainError("CODE", message)` in src/colibri, found in the source;
- the switchboard's refusals: the codes of colibri.switchboard.base.errors and the reason each row
  records (its REFUSALS table), with the reasons of colibri.core.reasons;
- the exit codes of colibri.serving.exits.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import colibri
from colibri.chain import errors as chain_errors
from colibri.core import reasons
from colibri.serving import exits
from colibri.switchboard.base import errors as switchboard_errors

SOURCE = Path(colibri.__file__).parent
_CODE = re.compile(r"^[A-Z][A-Z_]+$")

# What each of the switchboard's own codes means. The codes come from switchboard/base/errors.py;
# a code added there without a line here (or a line here whose code is gone) fails the build.
SWITCHBOARD_MEANING = {
    "SERVICE_UNAVAILABLE": "no entry that could take the call is routable (unhealthy, quarantined, "
    "removed, or nothing to fall back to); the message gives each entry's reason",
    "UNKNOWN_TOOL": "no tool by that name is listed to this caller; offers the closest names it may call",
    "UPSTREAM_TIMEOUT": "the downstream did not answer within the call's timeout",
    "UPSTREAM_ERROR": "the downstream failed the call: a lost connection, a malformed result, an error",
    "HANDLER_ERROR": "the switchboard could not do its own part (the audit store cannot take the row); "
    "`details.retryable` says whether trying again may help",
    "INVALID_PARAMS": "the request's arguments are not what the switchboard's own tool takes",
    "RATE_LIMITED": "over a rate limit; `details.retry_after_s` says when to try again",
    "TOOL_NOT_ADMITTED": "the caller's policy, scope or identity does not admit the tool",
    "TOOL_CHANGED": "the tool's definition changed since it was pinned; withheld until approved",
    "APPROVAL_DENIED": "a person refused the call an approval rule held",
    "APPROVAL_PENDING": "the call is held for a person's approval and was not decided within "
    "`approvals.timeout_s`; call again with the same arguments once it is approved",
    "APPROVAL_REQUIRED": "an `ask_user` rule holds the call but the client cannot be asked "
    "(it declared no elicitation); call from a client that can, or have a rule with approvers hold it",
}


class Unexplained(Exception):
    """A switchboard code without a meaning in SWITCHBOARD_MEANING."""


def page() -> str:
    lines = [
        "# Errors and exit codes",
        "",
        "<!-- generated from the codes' definitions by docs/hooks/ref_errors.py -->",
        "",
        "A refusal names what was wrong and what would be right. How envelopes carry codes:",
        "[Envelopes](../explanation/envelopes.md).",
        "",
        "## The chain's codes (Pattern A)",
        "",
        "Raised by `colibri serve`'s five-stage chain (`colibri.chain.errors`).",
        "",
        "| code | meaning |",
        "|---|---|",
    ]
    for error in _subclasses(chain_errors.ChainError):
        lines.append(f"| `{error.code}` | {_first_line(error.__doc__)} |")
    lines += [
        "",
        "## The domains' codes",
        "",
        "Each `DomainError` a domain raises, with the message it carries (`{…}` is filled in).",
        "",
        "| code | domain | where | message |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| `{code}` | {domain} | `{where}` | {message} |" for code, domain, where, message in _domain()
    ]
    lines += _switchboard()
    lines += ["", "## Exit codes", "", "| exit | meaning |", "|---|---|"]
    for name, value in vars(exits).items():
        if name.startswith("EXIT_"):
            lines.append(f"| {value} | {_exit_meaning(name)} |")
    return "\n".join(lines) + "\n"


def _subclasses(root: type[chain_errors.ChainError]) -> list[type[chain_errors.ChainError]]:
    found: list[type[chain_errors.ChainError]] = []
    child: type[chain_errors.ChainError]
    for child in root.__subclasses__():
        found += [child, *_subclasses(child)]
    return found


def _first_line(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def _domain() -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                found = _domain_error(node)
                if found is not None:
                    code, message = found
                    module = ".".join(path.relative_to(SOURCE.parent).with_suffix("").parts)
                    domain = path.relative_to(SOURCE).parts[1] if "domains" in path.parts else "-"
                    rows.append((code, domain, f"{module}.{function.name}", message))
    unique = {(code, where): (code, domain, where, message) for code, domain, where, message in rows}
    return sorted(unique.values())


def _domain_error(node: ast.AST) -> tuple[str, str] | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "DomainError"):
        return None
    if len(node.args) < 2 or not isinstance(node.args[0], ast.Constant):
        return None
    code = node.args[0].value
    if not (isinstance(code, str) and _CODE.match(code)):
        return None
    return code, _template(node.args[1]).replace("|", "\\|")


def _template(node: ast.expr) -> str:
    """The message as written, `{expression}` where a value goes in."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(part.value) if isinstance(part, ast.Constant) else "{" + ast.unparse(part.value) + "}"
            for part in node.values
            if isinstance(part, ast.Constant | ast.FormattedValue)
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _template(node.left) + _template(node.right)
    return "{" + ast.unparse(node) + "}"


def _switchboard() -> list[str]:
    codes = {
        value
        for name, value in vars(switchboard_errors).items()
        if isinstance(value, str) and name == value and _CODE.match(name)
    }
    missing = codes - set(SWITCHBOARD_MEANING)
    if missing:
        raise Unexplained(
            f"docs/hooks/ref_errors.py: SWITCHBOARD_MEANING has no meaning for {sorted(missing)}, "
            "codes of colibri.switchboard.base.errors"
        )
    lines = [
        "",
        "## The switchboard's codes (Pattern A)",
        "",
        "The switchboard's own refusals (`colibri.switchboard.base.errors`), and the `reason` its",
        "audit row records for each.",
        "",
        "| code | meaning | row's reason |",
        "|---|---|---|",
    ]
    for code in sorted(codes):
        derive = switchboard_errors.REFUSALS.get(code)
        reason = f"`{derive({'policy': 'NAME', 'why': 'WHY'})}`" if derive is not None else ""
        lines.append(f"| `{code}` | {SWITCHBOARD_MEANING[code]} | {reason} |")
    lines += ["", "### Reasons", "", "As `colibri.core.reasons` defines them:", "", "```text"]
    lines += [inspect.getdoc(reasons) or "", "```"]
    return lines


def _exit_meaning(name: str) -> str:
    source = inspect.getsource(exits)
    found = re.search(rf"^{name}: Final = \d+\s*#\s*(.+)$", source, re.MULTILINE)
    return found.group(1) if found else ""
