"""The shell examples of the docs: every ```sh block of docs/**/*.md and README.md, and which of
them are marked runnable (an HTML comment `<!-- runnable -->` on the line before the fence)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MARK = "<!-- runnable -->"
_FENCE = re.compile(r"^(\s*)```(sh|bash|shell|console)\s*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    text: str
    runnable: bool

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    return [*sorted(path for path in DOCS.rglob("*.md") if "hooks" not in path.parts), ROOT / "README.md"]


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        if lines[index].lstrip().startswith("````"):  # a fence showing fences: not an example
            index += 1
            while index < len(lines) and not lines[index].lstrip().startswith("````"):
                index += 1
            index += 1
            continue
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent = len(opening.group(1))
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        body = "\n".join(line[indent:] for line in lines[index + 1 : end])
        before = next((lines[i].strip() for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        found.append(Block(page, index + 1, body, before == MARK))
        index = end + 1
    return found


def colibri_commands(block: Block) -> list[tuple[int, list[str]]]:
    """Each `colibri ...` command of the block (continuation lines joined, comments and heredoc
    bodies left out, leading VAR=value assignments dropped), with its line number in the page."""
    commands: list[tuple[int, list[str]]] = []
    pending, start, heredoc = "", 0, None
    for offset, raw in enumerate(block.text.splitlines(), start=block.line + 1):
        if heredoc is not None:
            heredoc = None if raw.strip() == heredoc else heredoc
            continue
        if not pending:
            start = offset
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line, pending = pending + raw, ""
        marker = re.search(r"<<-?'?(\w+)'?", line)
        if marker:
            heredoc = marker.group(1)
        for command in _commands_of(line):
            words = command
            while words and _ASSIGNMENT.match(words[0]):
                words = words[1:]
            if words and words[0] == "colibri":
                commands.append((start, words[1:]))
    return commands


def _commands_of(line: str) -> list[list[str]]:
    """The simple commands of one shell line: its words split at `;`, `&&`, `||` and `|`, each cut
    at its first redirection."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    cut = False
    for token in lexer:
        if token in (";", "&&", "||", "|", "&"):
            commands.append([])
            cut = False
        elif token and set(token) <= set("<>&|;()"):
            cut = True  # a redirection: its target is not an argument
        elif not cut:
            commands[-1].append(token)
    return [command for command in commands if command]
