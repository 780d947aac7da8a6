"""Options anywhere: an option may come before a subcommand's name as well as after it.

argparse gives each option to the parser that defines it, and a command's subcommand parses
everything after its name: `colibri switchboard --config F pins approve X` must reach `approve`'s
own `--config`, and `colibri log --db F entries` `entries`' `--db`. `subcommands_first` moves the
options written before a subcommand's name that the subcommand (or one below it) takes to just
after the name, at every level, before argparse reads the line; options of the command itself
stay where they are. So every option is declared once, where it belongs, and argparse's own
checks (required, exclusive, choices) and messages still apply, whatever the order.

A command whose subcommand may be left out (`colibri switchboard --config F` runs it) declares
the default with `set_defaults(<dest>=NAME)`; the default subcommand is then written in, so its
options parse as if it had been named.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence


def subcommands_first(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """`argv` with every option given before a subcommand's name moved after it (see above)."""
    argv = list(argv)
    subcommands = _subcommands(parser)
    if subcommands is None:
        return argv
    choices: dict[str, argparse.ArgumentParser] = dict(subcommands.choices)  # type: ignore[arg-type]
    options = _arities(parser)
    for child in choices.values():
        options.update(_arities(child, deep=True))
    position, found = _find_subcommand(argv, choices, options)
    if found is None and position < len(argv):
        return argv  # an unknown word or option: argparse says what is wrong with it
    own, moved = _split_leading(argv[:position], _arities(parser), options)
    if found is None:
        found = parser.get_default(subcommands.dest)
        if found not in choices:
            # No subcommand: argparse's message names what is missing, not an option's value
            # taken for a subcommand's name.
            return own
    # An option no subcommand of this one takes moves too, so that argparse names it unrecognised.
    rest = argv[position + 1 :] if position < len(argv) else []
    return [*own, found, *subcommands_first(choices[found], [*moved, *rest])]


def _find_subcommand(
    argv: list[str], choices: dict[str, argparse.ArgumentParser], options: dict[str, int]
) -> tuple[int, str | None]:
    """The position of the first subcommand name, skipping known options and their values; the
    position where scanning stopped (an unknown word or option) and None when there is none."""
    position = 0
    while position < len(argv):
        word = argv[position]
        if word in choices:
            return position, word
        name = _option_name(word, options)
        if name is None:
            return position, None
        position += 1 + (0 if "=" in word else options[name])
    return position, None


def _split_leading(
    leading: list[str], own_options: dict[str, int], child_options: dict[str, int]
) -> tuple[list[str], list[str]]:
    """The leading words kept for the command itself (its own options, `--help` among them, and
    anything unknown), and those the subcommand takes."""
    known = {**child_options, **own_options}
    own: list[str] = []
    moved: list[str] = []
    position = 0
    while position < len(leading):
        word = leading[position]
        name = _option_name(word, known)
        end = position + 1 + (0 if name is None or "=" in word else known[name])
        (own if name is None or name in own_options else moved).extend(leading[position:end])
        position = end
    return own, moved


def _option_name(word: str, options: dict[str, int]) -> str | None:
    """The option `word` names (`--db`, `--db=F`, or a unique prefix, as argparse allows), or None."""
    if not word.startswith("-") or word == "--":
        return None
    name = word.partition("=")[0]
    if name in options:
        return name
    prefixed = [option for option in options if name.startswith("--") and option.startswith(name)]
    return prefixed[0] if len(prefixed) == 1 else None


def _arities(parser: argparse.ArgumentParser, deep: bool = False) -> dict[str, int]:
    """How many words each option of `parser` takes (and of every subcommand below it, if deep)."""
    found: dict[str, int] = {}
    for action in parser._actions:
        for name in action.option_strings:
            # Colibri's options take a fixed number of words; one taking a variable number is
            # counted as taking one, the common case.
            found[name] = action.nargs if isinstance(action.nargs, int) else 1
    subcommands = _subcommands(parser)
    if deep and subcommands is not None:
        for child in _parsers(subcommands):
            found.update(_arities(child, deep=True))
    return found


def _subcommands(parser: argparse.ArgumentParser) -> argparse.Action | None:
    return next((action for action in parser._actions if action.nargs == argparse.PARSER), None)


def _parsers(subcommands: argparse.Action) -> Iterator[argparse.ArgumentParser]:
    seen: set[int] = set()
    for child in subcommands.choices.values():  # type: ignore[union-attr]
        if id(child) not in seen:
            seen.add(id(child))
            yield child
