"""The CLI reference, read from the argparse parser `colibri` itself runs (colibri.cli.build_parser).

Each command and subcommand is a heading `colibri WORD ...` (so its anchor is `#colibri-word-...`),
followed by its description and a table of its arguments as argparse declares them.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from colibri.cli import build_parser

SUPPRESSED = argparse.SUPPRESS


def page() -> str:
    parser = build_parser()
    lines = [
        "# Command line",
        "",
        "<!-- generated from colibri.cli.build_parser by docs/hooks/ref_cli.py: edit the parser -->",
        "",
        "Every command of `colibri`, read from the parser it runs. Options may come before or after a",
        "subcommand's words (`colibri switchboard pins approve --config F svc.tool` is",
        "`colibri switchboard --config F pins approve svc.tool`). Exit codes: see",
        "[Errors and exit codes](errors.md#exit-codes).",
        "",
    ]
    for words, command in _commands(parser, ("colibri",)):
        lines += _section(words, command)
    return "\n".join(lines) + "\n"


def _commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*words, name))


def _section(words: tuple[str, ...], parser: argparse.ArgumentParser) -> list[str]:
    level = "#" * min(len(words) + 1, 4)
    lines = [f"{level} {' '.join(words)}", ""]
    usage = parser.format_usage().removeprefix("usage: ").strip()
    lines += ["```text", " ".join(usage.split()), "```", ""]
    if parser.description:
        lines += [_escaped(parser.description), ""]
    formatter = parser._get_formatter()
    rows = [_row(action, formatter) for action in parser._actions if _shown(action)]
    if rows:
        lines += ["| argument | meaning | default |", "|---|---|---|", *rows, ""]
    return lines


def _shown(action: argparse.Action) -> bool:
    if isinstance(action, argparse._SubParsersAction):
        return True
    return action.help is not SUPPRESSED and action.dest != "help"


def _row(action: argparse.Action, formatter: argparse.HelpFormatter) -> str:
    if isinstance(action, argparse._SubParsersAction):
        names = ", ".join(f"`{name}`" for name in action.choices)
        return f"| `{action.metavar or action.dest}` | one of {names} | |"
    if action.option_strings:
        takes = action.nargs != 0
        metavar = action.metavar or action.dest.upper()
        shown = ", ".join(f"{option} {metavar}" if takes else option for option in action.option_strings)
    else:
        shown = str(action.metavar or action.dest)
    meaning = _escaped(formatter._expand_help(action) if action.help else "")
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        meaning += " (one of " + ", ".join(f"`{choice}`" for choice in action.choices) + ")"
    if action.required and action.option_strings:
        meaning += " **required**"
    default = action.default
    unset = default in (None, False, SUPPRESSED, []) or action.nargs == 0
    shown_default = "" if unset else f"`{default}`"
    return f"| `{shown}` | {meaning} | {shown_default} |"


def _escaped(text: str) -> str:
    """Help text as one table cell: `|` escaped, `%%` as argparse prints it."""
    return " ".join(text.replace("%%", "%").replace("|", "\\|").split())
